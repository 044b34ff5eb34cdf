"""Readers: sources -> rows of cell values with their provenance. One module per kind of source.

Knows nothing of mappings. Each reader module defines its `KIND` (`kinds.SourceKind`: how to read
it, how to describe it, its files, its fingerprint, ...); `KINDS` below maps each kind's name to
it, and every question about a source goes through that registry. A new kind of source is one
module and one line in `KINDS`.
"""

from __future__ import annotations

from pathlib import Path

from loader.errors import SheetError
from loader.source.readers import csv, json_kind, old_excel, sql_kind, table, xlsx, xml_kind
from loader.source.readers.kinds import Source, SourceKind, SourceShape, Wanted, options_of
from loader.source.readers.rows import WHITESPACE, CellValue, SheetData, SheetRow, column_letter, is_blank
from loader.source.readers.xlsx_package import check_regular_file
from loader.suggestions import closest

__all__ = [
    "KINDS",
    "WHITESPACE",
    "CellValue",
    "MissingSheet",
    "NotASpreadsheet",
    "SheetData",
    "SheetRow",
    "Source",
    "SourceKind",
    "SourceShape",
    "Wanted",
    "column_letter",
    "file_source",
    "fingerprint_name",
    "first_visible_sheet",
    "has_sheets",
    "is_blank",
    "kind_for",
    "kind_of",
    "named_kinds",
    "read_sheet",
    "read_source",
    "reads_files",
    "sheet_names",
]

KINDS: dict[str, SourceKind] = {kind.name: kind for kind in (
    xlsx.KIND,
    csv.KIND,
    old_excel.KIND,
    table.KIND,
    sql_kind.KIND,
    json_kind.KIND,
    xml_kind.KIND,
)}

NOTHING_WANTED = Wanted()  # what a file kind is read with: every column, no URL fetched


def kind_of(path: Path) -> SourceKind | None:
    """The kind of source a file is, told by its suffix; None for a kind the loader does not know.
    A symlink is judged by the name of the file it leads to (`outside.csv` linking to /etc/passwd
    is no CSV file)."""
    suffix = judged_name(path).suffix.lower()
    return next((kind for kind in KINDS.values() if suffix in kind.suffixes), None)


def judged_name(path: Path) -> Path:
    """The path whose name tells a file's kind: a symlink's target (every link in a chain followed)."""
    try:
        return path.resolve() if path.is_symlink() else path
    except (OSError, RuntimeError):  # a loop of links, a name too long: judged by its own name
        return path


def file_source(path: Path, *, delimiter: str | None = None, encoding: str | None = None,
                engine: str | None = None) -> Source:
    """The file at `path` as a source of the kind its suffix tells (a kind no reader knows is refused
    when it is read, by its name alone)."""
    kind = kind_of(path)
    options = options_of({"delimiter": delimiter, "encoding": encoding, "engine": engine})
    return Source(kind.name if kind else "", str(path), options)


def kind_for(source: Source) -> SourceKind:
    """The kind of `source` (a file of no known kind: one that refuses it, by its name)."""
    return KINDS.get(source.kind) or _UNKNOWN_FILE


def named_kinds() -> list[str]:
    """The kinds a mapping's `sources:` entry names by a key (the kinds that are not files)."""
    return sorted(name for name, kind in KINDS.items() if kind.from_mapping is not None)


def fingerprint_name(source: Source) -> str:
    """What the fingerprint of a source whose kind digests its values is filed under: `kind:name`."""
    return f"{source.kind}:{source.name or source.location}"


def reads_files(name: str) -> bool:
    """Whether a plan's fingerprint `name` is of a file (False: of the values a source gave,
    `fingerprint_name`; not read again to check the plan)."""
    kind, colon, _ = name.partition(":")
    return not (colon and kind in KINDS and KINDS[kind].fingerprint is not None)


class NotASpreadsheet(SheetError):
    """A file whose name ends in no suffix a reader knows: refused by its name alone, before a byte of
    it is read (so nothing of, say, /etc/passwd is ever shown as a header row)."""

    def __init__(self, path: Path, display: str):
        shown = [suffix for k in KINDS.values() for suffix in k.advertised]
        suffixes = f"{', '.join(shown[:-1])} or {shown[-1]}"
        judged = judged_name(path)
        suffix = judged.suffix.lower()
        what = f"its name ends in {suffix!r}" if suffix else "its name has no file extension"
        if judged is not path:
            what = f"it is a link to a file whose name {what.removeprefix('its name ')}"
        message, hint = f"not a spreadsheet the loader reads: {what}", f"use {suffixes}"
        if suffix in OTHER_WORKBOOKS:
            program, how = OTHER_WORKBOOKS[suffix]
            message = f"a {program} workbook ({what}), which the loader does not read"
            hint = f"{how}, and give the loader that file"
        elif not suffix:
            hint += "; a CSV file saved without its extension: rename it to end in .csv"
        super().__init__(message, where=display, hint=hint)


# Workbooks of other programs, refused by name: (the program, how to get an .xlsx from it).
_SAVE_AS = "choose File › Save As… with the file type"
OTHER_WORKBOOKS = {
    ".numbers": ("Numbers", "in Numbers, choose File › Export To › Excel… to make an .xlsx"),
    ".ods": ("LibreOffice (OpenDocument)", f"in LibreOffice, {_SAVE_AS} Excel 2007-365 (.xlsx)"),
    ".fods": ("LibreOffice (OpenDocument)", f"in LibreOffice, {_SAVE_AS} Excel 2007-365 (.xlsx)"),
    ".xlsb": ("binary Excel", f"in Excel, {_SAVE_AS} Excel Workbook (.xlsx)"),
}


def has_sheets(path: Path) -> bool:
    """True for workbooks (a mapping names a sheet of them), False for one-table files such as CSV."""
    kind = kind_of(path)
    return kind is not None and kind.has_sheets


def sheet_names(path: Path, display: str | None = None) -> list[str]:
    """The names of the sheets of a workbook, hidden ones and chart sheets included; none for one-table files."""
    kind = kind_of(path)
    return kind.sheet_names(file_source(path), display or str(path)) if kind and kind.sheet_names else []


def first_visible_sheet(path: Path, display: str | None = None) -> str | None:
    """The sheet a mapping without `sheet:` reads: the first worksheet not hidden (never a chart sheet)."""
    kind = kind_of(path)
    source = file_source(path)
    return kind.first_visible_sheet(source, display or str(path)) if kind and kind.first_visible_sheet else None


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
    source = file_source(path, delimiter=delimiter, encoding=encoding, engine=None if engine == "calamine" else engine)
    return read_source(source, display, sheet)


def read_source(source: Source, display: str, sheet: str | None = None, wanted: Wanted = NOTHING_WANTED) -> SheetData:
    """One table of a source: the sheet named (None: the first visible), or its only table; `wanted`
    what the mappings read of it (the columns a query or a record's paths give)."""
    kind = kind_for(source)
    if kind.sheet_names is None:
        return kind.read(source, display, None, wanted)
    names = kind.sheet_names(source, display)
    if sheet is None and kind.first_visible_sheet is not None:
        sheet = kind.first_visible_sheet(source, display)
    if sheet is None or sheet not in names:
        raise MissingSheet(sheet, names, display)
    return kind.read(source, display, sheet, wanted)


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


def _refuse_unknown_file(source: Source, display: str, sheet: str | None, wanted: Wanted) -> SheetData:
    raise NotASpreadsheet(source.path, display)


_UNKNOWN_FILE = SourceKind("", _refuse_unknown_file)
