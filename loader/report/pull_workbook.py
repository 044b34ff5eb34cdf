"""The workbook `loader pull` writes: one sheet per entity (loader.report.pull_table's tables),
readable by its owner only, every cell neutralised against formula injection and its text escaped
as xlsx text must be (`safe_cells.xlsx_row`), so that reading it back gives what the service holds."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from loader.files.safe_write import replacing
from loader.report.pull_table import SheetTable


def write_pull_workbook(path: Path, tables: Iterable[SheetTable]) -> None:
    """Write each table as a sheet (its name cut to Excel's 31 characters), mode 0600: live records
    hold names, e-mails and dates of birth."""
    from openpyxl import Workbook

    from loader.safe_cells import xlsx_row

    book = Workbook(write_only=True)
    for table in tables:
        sheet = book.create_sheet(title=table.name[:31])
        sheet.append(list(table.header))
        for row in table.rows:
            sheet.append(xlsx_row(row))
    with replacing(path) as handle:  # 0600 before the first byte
        book.save(handle)
