"""Readers: files -> rows of cell values with their provenance. One module per kind of source.

Knows nothing of mappings. Each reader module defines its `KIND` (`kinds.SourceKind`: its
suffixes, how to read it, and its sheets if it has any); `KINDS` below lists them, and every
question about a source goes through that list. A new kind of source is one module and one line
in `KINDS`.
"""

from __future__ import annotations

from pathlib import Path

from loader.errors import SheetError
from loader.source.readers import csv, old_excel, xlsx
from loader.source.readers.kinds import ReadOptions, Source, SourceKind
from loader.source.readers.rows import WHITESPACE, CellValue, SheetData, SheetRow, column_letter, is_blank
from loader.source.readers.xlsx_package import check_regular_file
from loader.suggestions import closest

__all__ = [
    "KINDS",
    "WHITESPACE",
    "CellValue",
    "MissingSheet",
    "NotASpreadsheet",
    "ReadOptions",
    "SheetData",
    "SheetRow",
    "Source",
    "SourceKind",
    "column_letter",
    "first_visible_sheet",
    "has_sheets",
    "is_blank",
    "kind_of",
    "read_sheet",
    "read_source",
    "sheet_names",
    "source_at",
]

KINDS: tuple[SourceKind, ...] = (xlsx.KIND, csv.KIND, old_excel.KIND)


def kind_of(path: Path) -> SourceKind | None:
    """The kind of source a file is, told by its suffix; None for a kind the loader does not know."""
    suffix = path.suffix.lower()
    return next((kind for kind in KINDS if suffix in kind.suffixes), None)


def source_at(path: Path, display: str, options: ReadOptions | None = None) -> Source:
    """The source at `path`. Raises SheetError for a kind of file no reader knows."""
    kind = kind_of(path)
    if kind is None:
        raise NotASpreadsheet(path, display)
    return Source(path, kind, options or ReadOptions())


class NotASpreadsheet(SheetError):
    """A file whose name ends in no suffix a reader knows: refused by its name alone, before a byte of
    it is read (so nothing of, say, /etc/passwd is ever shown as a header row)."""

    def __init__(self, path: Path, display: str):
        shown = [suffix for k in KINDS for suffix in k.advertised]
        suffixes = f"{', '.join(shown[:-1])} or {shown[-1]}"
        suffix = path.suffix.lower()
        what = f"its name ends in {suffix!r}" if suffix else "its name has no file extension"
        super().__init__(f"not a spreadsheet the loader reads: {what}", where=display,
                         hint=f"use {suffixes}" + ("" if suffix else "; a CSV file saved without its extension: "
                                                               "rename it to end in .csv"))


def has_sheets(path: Path) -> bool:
    """True for workbooks (a mapping names a sheet of them), False for one-table files such as CSV."""
    kind = kind_of(path)
    return kind is not None and kind.has_sheets


def sheet_names(path: Path, display: str | None = None) -> list[str]:
    """The names of the sheets of a workbook, hidden ones and chart sheets included; none for one-table files."""
    kind = kind_of(path)
    return kind.sheet_names(path, display or str(path)) if kind and kind.sheet_names else []


def first_visible_sheet(path: Path, display: str | None = None) -> str | None:
    """The sheet a mapping without `sheet:` reads: the first worksheet not hidden (never a chart sheet)."""
    kind = kind_of(path)
    return kind.first_visible_sheet(path, display or str(path)) if kind and kind.first_visible_sheet else None


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
    check_regular_file(path, display)  # a stat: nothing is read
    return read_source(source_at(path, display, ReadOptions(delimiter, encoding, engine)), display, sheet)


def read_source(source: Source, display: str, sheet: str | None = None) -> SheetData:
    """One table of a source: the sheet named (None: the first visible), or its only table."""
    kind = source.kind
    if kind.sheet_names is None:
        return kind.read(source.path, display, None, source.options)
    names = kind.sheet_names(source.path, display)
    if sheet is None and kind.first_visible_sheet is not None:
        sheet = kind.first_visible_sheet(source.path, display)
    if sheet is None or sheet not in names:
        raise MissingSheet(sheet, names, display)
    return kind.read(source.path, display, sheet, source.options)


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


