"""Workbooks and CSV files -> rows of cell values with their provenance.

Knows nothing of mappings. What a cell gives (documented for users in the README):

- Numbers: integral numbers come back as `int` (calamine reports 101 as 101.0; we never let a
  `.0` reach a string). Numbers *displayed* with leading zeros (a number format such as "00000")
  come back as the displayed text ("00851"), because that is what the data officer sees.
- Text is kept raw (leading zeros, trailing spaces and non-breaking spaces included); a cell of
  only whitespace counts as empty. Value steps (`transform: [strip]`) clean text.
- Dates come back as `date` (or `datetime` when they carry a time of day).
- Formulas give the value cached at the last save; a formula with no cached value is empty and
  gives a warning naming the cell. Error values (#DIV/0!, #N/A) are empty, with a warning.
- Merged cells: every cell of a merged range gives the value of its top-left cell, so a
  vertically merged "School" cell applies to every row it spans.
- Hidden rows and columns are read like any other (filter rows with `where`); a hidden sheet is
  read when a mapping names it. Without `sheet:`, the first visible sheet is read.
- Blank rows (every cell empty or whitespace) are skipped and not counted.
- Text that a workbook the loader wrote neutralised against formula injection (`loader pull`, the
  results workbook: a single quote put before a leading = + - @, tab or carriage return) loses that
  one quote, so a pulled workbook maps back to the values the service holds: "'=HYPERLINK(...)"
  reads as "=HYPERLINK(...)", "'-5" as "-5". Any other leading quote ("'quoted") is kept. The
  value is only ever text here; nothing a sheet holds is evaluated.
- CSV: every value is text (leading zeros kept, neutralising quotes dropped as above); UTF-8 with
  or without BOM unless `encoding` says otherwise; the delimiter is sniffed among , ; tab | unless
  given.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path
from typing import cast

from openpyxl.utils import get_column_letter

from loader.errors import SheetError
from loader.places import CellRef
from loader.safe_cells import DANGEROUS_PREFIXES, QUOTE
from loader.source.xlsx_meta import SheetMeta, read_sheet_meta

CellValue = str | int | float | bool | date | datetime | time | None

EXCEL_SUFFIXES = frozenset({".xlsx", ".xlsm"})
CSV_SUFFIXES = frozenset({".csv", ".txt"})
SNIFF_DELIMITERS = ",;\t|"
WHITESPACE = " \t\r\n\u00a0\u2007\u202f\ufeff"
# How `loader.report.safe_cells` writes text that could be read as a formula.
_NEUTRALISED = tuple(QUOTE + prefix for prefix in DANGEROUS_PREFIXES)


@dataclass(frozen=True)
class SheetRow:
    """One non-blank row: 1-based `number` and the values from column A on."""

    number: int
    values: tuple[CellValue, ...]


@dataclass(frozen=True)
class SheetData:
    """Every non-blank row of one sheet (or CSV file), with warnings about cells."""

    file: str  # display path
    sheet: str | None  # None for CSV
    rows: tuple[SheetRow, ...]
    warnings: tuple[tuple[CellRef, str, str], ...] = ()  # (cell, code, message)

    def cell(self, row: int, column: int) -> CellRef:
        """The CellRef of a 1-based row and 0-based column index."""
        return CellRef(self.file, self.sheet, f"{column_letter(column)}{row}", row)

    def row_ref(self, row: int) -> CellRef:
        return CellRef(self.file, self.sheet, None, row)


_LETTERS: dict[int, str] = {}


def column_letter(index: int) -> str:
    """0-based column index -> "A", "B", ... "AA"."""
    letter = _LETTERS.get(index)
    if letter is None:
        letter = _LETTERS.setdefault(index, get_column_letter(index + 1))
    return letter


def unneutralised(text: str) -> str:
    """`text` without the quote the loader puts before text that could be read as a formula."""
    return text[1:] if text.startswith(_NEUTRALISED) else text


def is_blank(value: CellValue) -> bool:
    return value is None or (isinstance(value, str) and not value.strip(WHITESPACE))


def sheet_names(path: Path) -> list[str]:
    """The names of the sheets of a workbook, hidden ones included."""
    import python_calamine

    try:
        return list(python_calamine.CalamineWorkbook.from_path(str(path)).sheet_names)
    except Exception as exc:  # calamine raises several unrelated types for unreadable files
        raise SheetError(f"cannot read workbook: {exc}", where=str(path)) from exc


def first_visible_sheet(path: Path) -> str | None:
    """The sheet a mapping without `sheet:` reads: the first one not hidden."""
    import python_calamine

    try:
        book = python_calamine.CalamineWorkbook.from_path(str(path))
    except Exception as exc:
        raise SheetError(f"cannot read workbook: {exc}", where=str(path)) from exc
    visible = [m.name for m in book.sheets_metadata if m.visible == python_calamine.SheetVisibleEnum.Visible]
    names: list[str] = visible or list(book.sheet_names)
    return names[0] if names else None


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
    if not path.is_file():
        raise SheetError("source file not found", where=display)
    if suffix in CSV_SUFFIXES:
        return _read_csv(path, display, delimiter=delimiter, encoding=encoding)
    if suffix not in EXCEL_SUFFIXES:
        raise SheetError(f"unsupported file type {suffix!r}", where=display, hint="use .xlsx, .xlsm or .csv")
    names = sheet_names(path)
    if sheet is None:
        sheet = first_visible_sheet(path)
    if sheet is None or sheet not in names:
        raise SheetError(
            f"no sheet named {sheet!r}; the sheets are: {', '.join(repr(n) for n in names)}",
            where=display,
            hint=_did_you_mean(sheet or "", names),
        )
    meta = read_sheet_meta(path, sheet)
    if engine == "openpyxl":
        raw = _openpyxl_rows(path, sheet)
    else:
        raw = _calamine_rows(path, sheet)
    return _assemble(display, sheet, raw, meta)


def _did_you_mean(wanted: str, names: Iterable[str]) -> str | None:
    folded = wanted.strip(WHITESPACE).casefold()
    for name in names:
        if name.strip(WHITESPACE).casefold() == folded:
            return f"did you mean {name!r}?"
    import difflib

    close = difflib.get_close_matches(wanted, list(names), n=1)
    return f"did you mean {close[0]!r}?" if close else None


def _normal(value: object) -> CellValue:
    """One engine-independent cell value (see the module docstring)."""
    kind = type(value)
    if kind is str:
        return unneutralised(cast(str, value)) or None
    if kind is float:
        number = cast(float, value)
        return int(number) if number.is_integer() and abs(number) < 2**63 else number
    if kind is bool or kind is int or kind is date or kind is time:
        return cast(CellValue, value)
    if isinstance(value, datetime):
        return value.date() if value.time() == time(0) else value
    return None  # timedelta, error values and anything else without a loader meaning


def _calamine_rows(path: Path, sheet: str) -> Iterator[tuple[int, Sequence[object]]]:
    import python_calamine

    try:
        data = python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name(sheet)
    except Exception as exc:
        raise SheetError(f"cannot read sheet: {exc}", where=f"{path} › {sheet}") from exc
    start = data.start
    if start is None:
        return
    pad = ("",) * start[1]
    # iter_rows counts rows from the first row of the sheet but columns from the first used one.
    for index, values in enumerate(data.iter_rows()):
        yield index + 1, (*pad, *values) if pad else values


def _openpyxl_rows(path: Path, sheet: str) -> Iterator[tuple[int, Sequence[object]]]:
    import openpyxl

    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        for row in book[sheet].iter_rows():
            cells = [c for c in row if getattr(c, "column", None) is not None]
            if not cells:
                continue
            values: list[object] = [None] * max(c.column for c in cells)
            for c in cells:
                values[c.column - 1] = c.value
            yield cells[0].row, values
    finally:
        book.close()


def _merged_sources(meta: SheetMeta) -> dict[int, dict[int, tuple[int, int]]]:
    """row -> {col: (row, col) of the top-left cell} for every non-top-left cell of a merged range."""
    fill: dict[int, dict[int, tuple[int, int]]] = {}
    for first_row, first_col, last_row, last_col in meta.merged:
        for r in range(first_row, last_row + 1):
            for c in range(first_col, last_col + 1):
                if (r, c) != (first_row, first_col):
                    fill.setdefault(r, {})[c] = (first_row, first_col)
    return fill


def _assemble(display: str, sheet: str, raw: Iterable[tuple[int, Sequence[object]]], meta: SheetMeta) -> SheetData:
    rows: list[SheetRow] = []
    fill = _merged_sources(meta)
    wanted: dict[int, set[int]] = {}
    for cells in fill.values():
        for r, c in cells.values():
            wanted.setdefault(r, set()).add(c)
    top_left: dict[tuple[int, int], CellValue] = {}
    padded = meta.zero_padded
    error_cells: dict[int, list[int]] = {}
    for r, c, _ in meta.errors:
        error_cells.setdefault(r, []).append(c)
    for number, values in raw:
        normal = list(map(_normal, values))
        for c in error_cells.get(number, ()):
            if c < len(normal):
                normal[c] = None  # openpyxl gives "#DIV/0!", calamine "": an error is no value
        widths = padded.get(number)
        if widths:
            for c, width in widths.items():
                value = normal[c] if c < len(normal) else None
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    normal[c] = str(value).zfill(width)
        for c in wanted.get(number, ()):
            top_left[(number, c)] = normal[c] if c < len(normal) else None
        if number in fill:
            for c, source in fill[number].items():
                while len(normal) <= c:
                    normal.append(None)
                normal[c] = top_left.get(source)
        if all(is_blank(v) for v in normal):
            continue
        while normal and normal[-1] is None:
            normal.pop()
        rows.append(SheetRow(number, tuple(normal)))
    sheet_data = SheetData(display, sheet, tuple(rows))
    warnings = tuple(
        (sheet_data.cell(r, c), "formula-uncached", _UNCACHED)
        for r, c in meta.uncached_formulas
    ) + tuple(
        (sheet_data.cell(r, c), "cell-error", f"the cell holds the error {shown}, so it is read as empty")
        for r, c, shown in meta.errors
    )
    return SheetData(display, sheet, tuple(rows), warnings)


_UNCACHED = (
    "formula has no cached value (the file was saved by a program that does not calculate formulas), "
    "so the cell is read as empty; open and save the file in Excel or LibreOffice"
)


def _read_csv(path: Path, display: str, *, delimiter: str | None, encoding: str | None) -> SheetData:
    try:
        text = path.read_text(encoding=encoding or "utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SheetError(
            f"cannot decode the file as {encoding or 'UTF-8'} (byte {exc.start})",
            where=display,
            hint="save it as UTF-8, or set `encoding:` in the mapping (e.g. cp1252)",
        ) from exc
    except LookupError as exc:
        raise SheetError(f"unknown encoding {encoding!r}", where=display) from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    sep = delimiter or _sniff(text)
    rows: list[SheetRow] = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    try:
        for number, values in enumerate(reader, start=1):
            normal = tuple(unneutralised(v) if v else None for v in values)
            if all(is_blank(v) for v in normal):
                continue
            rows.append(SheetRow(number, normal))
    except csv.Error as exc:
        raise SheetError(f"malformed CSV: {exc}", where=f"{display} › row {reader.line_num}") from exc
    return SheetData(display, None, tuple(rows))


def _sniff(text: str) -> str:
    sample = text[:64 * 1024]
    try:
        return csv.Sniffer().sniff(sample, delimiters=SNIFF_DELIMITERS).delimiter
    except csv.Error:
        first = sample.splitlines()[0] if sample else ""
        counts = {d: first.count(d) for d in SNIFF_DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        return best if counts[best] else ","
