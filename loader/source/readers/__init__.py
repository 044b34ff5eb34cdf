"""Readers: files -> rows of cell values with their provenance. One module per kind of file.

Knows nothing of mappings. A new kind of source is one new module here (its `SUFFIXES` and a
`read` function giving `SheetData`) and one line in `read_sheet` below.
"""

from __future__ import annotations

from pathlib import Path

from loader.errors import SheetError
from loader.source.readers import csv, xlsx
from loader.source.readers.rows import WHITESPACE, CellValue, SheetData, SheetRow, column_letter, is_blank
from loader.source.readers.xlsx_package import check_regular_file
from loader.suggestions import closest

__all__ = [
    "WHITESPACE",
    "CellValue",
    "MissingSheet",
    "SheetData",
    "SheetRow",
    "column_letter",
    "first_visible_sheet",
    "has_sheets",
    "is_blank",
    "read_sheet",
    "sheet_names",
]


def has_sheets(path: Path) -> bool:
    """True for workbooks (a mapping names a sheet of them), False for one-table files such as CSV."""
    return path.suffix.lower() in xlsx.SUFFIXES


def sheet_names(path: Path) -> list[str]:
    """The names of the sheets of a workbook, hidden ones and chart sheets included."""
    return xlsx.sheet_names(path)


def first_visible_sheet(path: Path) -> str | None:
    """The sheet a mapping without `sheet:` reads: the first worksheet not hidden (never a chart sheet)."""
    return xlsx.first_visible_sheet(path)


def read_sheet(
    path: Path,
    display: str,
    sheet: str | None = None,
    *,
    delimiter: str | None = None,
    encoding: str | None = None,
    engine: str = "calamine",
) -> SheetData:
    """Read one sheet of a workbook (or a CSV file) into non-blank rows.

    Raises SheetError when the file or sheet cannot be read; the message lists the sheets there.
    `engine` is "calamine" (fast, default) or "openpyxl" (slow; kept to cross-check readings).
    """
    suffix = path.suffix.lower()
    check_regular_file(path, display)
    if suffix in csv.SUFFIXES:
        return csv.read(path, display, delimiter=delimiter, encoding=encoding)
    if suffix in xlsx.OLD_SUFFIXES:
        raise SheetError("this is an old binary Excel workbook (.xls, Excel 97-2003 format), which the loader "
                         "does not read", where=display,
                         hint="open it in Excel or LibreOffice and save it as .xlsx (Excel Workbook)")
    if suffix not in xlsx.SUFFIXES:
        raise SheetError(f"unsupported file type {suffix!r}", where=display, hint="use .xlsx, .xlsm or .csv")
    names = xlsx.sheet_names(path, display)
    if sheet is None:
        sheet = xlsx.first_visible_sheet(path, display)
    if sheet is None or sheet not in names:
        raise MissingSheet(sheet, names, display)
    return xlsx.read(path, display, sheet, engine=engine)


class MissingSheet(SheetError):
    """The workbook has no sheet of that name (or no worksheet at all, for `sheet` None)."""

    def __init__(self, sheet: str | None, names: list[str], display: str):
        super().__init__(
            f"no sheet named {sheet!r}; the sheets are: {', '.join(repr(n) for n in names)}",
            where=display,
            hint=f"did you mean {close!r}?" if (close := closest(sheet or "", names)) else None,
        )
        self.sheet = sheet
        self.names = names


