"""results.xlsx's first sheet, "Summary": where and when the apply ran, its counts per block, and how
to read the sheets after it (a copy of each source with its outcome columns)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loader.apply.results import OUTCOMES, Results
from loader.safe_cells import xlsx_row

if TYPE_CHECKING:
    from openpyxl.worksheet.worksheet import Worksheet

SUMMARY_SHEET = "Summary"


def write_summary(sheet: Worksheet | Any, results: Results) -> None:
    """Fill `sheet` (the workbook's first) with the apply's summary."""
    from openpyxl.styles import Alignment, Font
    from openpyxl.utils import get_column_letter

    sheet.title = SUMMARY_SHEET
    head: list[list[Any]] = [
        ["Results of an apply", ""],
        ["environment", f"{results.env_name} ({results.environment})"],
        ["apply id", results.apply_id or ""],
        ["started", results.started_at or ""],
        ["finished", results.finished_at or ""],
        ["seconds", round(results.elapsed_s, 1) if results.elapsed_s is not None else ""],
        ["state", "interrupted" if results.interrupted else results.refused or ("done" if results.ok else
                                                                                    "done with failures or skips")],
        [],
    ]
    for values in head:
        sheet.append(xlsx_row(values))
    sheet["A1"].font = Font(bold=True, size=14)
    columns = ["block", "sheet", *(o.value for o in OUTCOMES), "blocked by errors"]
    sheet.append(columns)
    for cell in sheet[sheet.max_row]:
        cell.font = Font(bold=True)
    first = sheet.max_row
    for block in results.blocks():
        file, where = results.block_sources.get(block.name, ("", None))
        sheet.append(xlsx_row([block.name, where or file, *(block.counts.get(o, 0) for o in OUTCOMES),
                               block.blocked]))
    sheet.auto_filter.ref = f"A{first}:{get_column_letter(len(columns))}{sheet.max_row}"
    sheet.append([])
    sheet.append(xlsx_row(["", "Each sheet after this one is a copy of a source sheet with the columns loader "
                               "status, loader id, loader message and loader block: failed rows are red, "
                               "skipped rows yellow, written rows green; a failed cell carries the message "
                               "as a comment. Fix the failed rows in the source and apply again."]))
    sheet.cell(sheet.max_row, 2).alignment = Alignment(wrap_text=True, vertical="top")
    for at, width in enumerate((22, 40, 10, 10, 10, 10, 10, 18), 1):
        sheet.column_dimensions[get_column_letter(at)].width = width
