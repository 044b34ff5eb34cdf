"""Workbooks (.xlsx, .xlsm) -> rows of cell values, read with calamine.

What a cell gives (documented for users in the README):

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
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime, time
from pathlib import Path
from typing import cast

from loader.errors import SheetError
from loader.source.readers.rows import CellValue, SheetData, SheetRow, is_blank, unneutralised
from loader.source.readers.xlsx_parts import SheetMeta, read_sheet_meta

SUFFIXES = frozenset({".xlsx", ".xlsm"})


def read(path: Path, display: str, sheet: str, *, engine: str = "calamine") -> SheetData:
    """Read one sheet (which must exist) into non-blank rows.

    `engine` is "calamine" (fast, default) or "openpyxl" (slow; kept to cross-check readings).
    """
    meta = read_sheet_meta(path, sheet)
    raw = _openpyxl_rows(path, sheet) if engine == "openpyxl" else _calamine_rows(path, sheet)
    return _assemble(display, sheet, raw, meta)


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
