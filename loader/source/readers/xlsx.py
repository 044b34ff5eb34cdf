"""Workbooks (.xlsx, .xlsm) -> rows of cell values, read with calamine.

What a cell gives (documented for users in docs/mappings.md):

- Numbers: integral numbers come back as `int` (calamine reports 101 as 101.0; we never let a
  `.0` reach a string). Numbers *displayed* with leading zeros (a number format such as "00000")
  come back as the displayed text ("00851"), because that is what the data officer sees.
- Text is kept raw (leading zeros, trailing spaces and non-breaking spaces included); a cell of
  only whitespace counts as empty. Value steps (`transform: [strip]`) clean text.
- Dates come back as `date` (or `datetime` when they carry a time of day). A date-formatted serial
  below 1, which calamine reads as a time of day, is a date (`_early_date`).
- Durations ([h]:mm and the like; calamine gives a `timedelta`) come back as ISO 8601 duration
  text, "PT36H30M" (`iso_duration`).
- Formulas give the value cached at the last save; a formula with no cached value is empty and
  gives a warning naming the cell. Error values (#DIV/0!, #N/A) are empty, with a warning.
- Merged cells: every cell of a merged range gives the value of its top-left cell, so a
  vertically merged "School" cell applies to every row it spans, also rows calamine does not
  yield (below the last row holding a value).
- Hidden rows and columns are read like any other (filter rows with `where`); a hidden sheet is
  read when a mapping names it. Without `sheet:`, the first visible worksheet is read.
- Blank rows (every cell empty or whitespace) are skipped and not counted.
- Text that a workbook the loader wrote neutralised against formula injection (`loader pull`, the
  results workbook: a single quote put before a leading = + - @, tab or carriage return) loses that
  one quote, so a pulled workbook maps back to the values the service holds: "'=HYPERLINK(...)"
  reads as "=HYPERLINK(...)", "'-5" as "-5". Any other leading quote ("'quoted") is kept. The
  value is only ever text here; nothing a sheet holds is evaluated. Text beginning with quotes
  before such a character loses one quote ("''=1" reads as "'=1"): the loader writes one more.
- Rich text (runs of differently formatted text) reads whole, with the spaces at the runs' ends
  that calamine would trim ("Example " + "richtext" is "Example richtext").
- Text escapes of the format (`_x000D_` for a carriage return, `_x005F_` for an underscore that
  would start one) read as the characters they stand for, with either engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import date, datetime, time, timedelta
from functools import partial
from itertools import chain, count, repeat
from pathlib import Path
from typing import cast

from loader.errors import SheetError
from loader.safe_cells import QUOTE, unescape_xlsx_text
from loader.source.readers.kinds import Source, SourceKind, Wanted
from loader.source.readers.rows import (
    NEUTRALISED,
    WHITESPACE,
    CellValue,
    SheetData,
    SheetRow,
    blank_texts,
    indexes,
    unneutralised,
)
from loader.source.readers.xlsx_parts import SheetMeta, read_sheet_meta, sheet_entries

SUFFIXES = frozenset({".xlsx", ".xlsm"})


def read(path: Path, display: str, sheet: str, *, engine: str = "calamine") -> SheetData:
    """Read one sheet (which must exist) into non-blank rows.

    `engine` is "calamine" (fast, default) or "openpyxl" (slow; kept to cross-check readings).
    The sheet-XML pass runs first: it refuses a damaged or oversized file before calamine allocates.
    """
    meta = read_sheet_meta(path, sheet, display)
    if engine == "openpyxl":
        return _assemble(display, sheet, _openpyxl_rows(path, sheet), meta)
    rows = _calamine_rows(path, display, sheet)
    text = _text_sheet(display, sheet, rows, meta)
    return text if text is not None else _assemble(display, sheet, enumerate(rows, start=1), meta)


def sheet_names(path: Path, display: str | None = None) -> list[str]:
    """The names of the sheets of a workbook, hidden ones and chart sheets included."""
    return [s.name for s in sheet_entries(path, display or str(path))]


def first_visible_sheet(path: Path, display: str | None = None) -> str | None:
    """The sheet a mapping without `sheet:` reads: the first visible worksheet (never a chart sheet)."""
    entries = [s for s in sheet_entries(path, display or str(path)) if s.kind == "worksheet"]
    visible = [s.name for s in entries if s.state == "visible"]
    names = visible or [s.name for s in entries]
    return names[0] if names else None


def iso_duration(value: timedelta) -> str:
    """A duration as ISO 8601 text, in hours, minutes and seconds as Excel's [h]:mm:ss shows it: "PT36H30M"."""
    micro = round(value / timedelta(microseconds=1))
    sign = "-" if micro < 0 else ""
    micro = abs(micro)
    hours, rest = divmod(micro, 3_600_000_000)
    minutes, rest = divmod(rest, 60_000_000)
    seconds = rest / 1_000_000
    text = (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    if seconds or not text:
        text += f"{seconds:.6f}".rstrip("0").rstrip(".") + "S"
    return f"{sign}PT{text}"


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
    if isinstance(value, timedelta):
        return iso_duration(value)
    return None  # error values and anything else without a loader meaning


def _calamine_rows(path: Path, display: str, sheet: str) -> list[Sequence[object]]:
    """The sheet's rows from row 1 on (blank ones included), each from column A on."""
    import python_calamine

    try:
        data = python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name(sheet)
    except BaseException as exc:  # calamine raises several unrelated types; a Rust panic is a BaseException
        if not isinstance(exc, Exception) and type(exc).__name__ != "PanicException":
            raise
        raise SheetError(
            f"the sheet's structure reads correctly but its values cannot be read ({type(exc).__name__}: {exc})",
            where=f"{display} › {sheet}",
            hint="open and save the file in Excel or LibreOffice; if it still fails, report the file",
        ) from exc
    start = data.start
    if start is None:
        return []
    # iter_rows counts rows from the first row of the sheet but columns from the first used one.
    rows: list[Sequence[object]] = list(data.iter_rows())
    if start[1]:
        pad = ("",) * start[1]
        rows = [(*pad, *values) for values in rows]
    return rows


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
                value = c.value
                values[c.column - 1] = unescape_xlsx_text(value) if type(value) is str else value
            yield cells[0].row, values
    finally:
        book.close()


def _with_merged_rows(
    raw: Iterable[tuple[int, Sequence[object]]], merged: Sequence[tuple[int, int, int, int]]
) -> Iterator[tuple[int, Sequence[object]]]:
    """`raw`, plus an empty row for each row a merged range covers that the engine did not yield
    (below the last row holding a value, or skipped as empty), so that the fill reaches it."""
    spans: list[tuple[int, int]] = []
    for first, last in sorted((r0 + 1, r1) for r0, _, r1, _ in merged if r1 > r0):
        if spans and first <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(spans[-1][1], last))
        else:
            spans.append((first, last))
    index = 0

    def covered(low: int, high: int) -> Iterator[int]:
        nonlocal index
        while index < len(spans) and spans[index][1] < low:
            index += 1
        k = index
        while k < len(spans) and spans[k][0] <= high:
            yield from range(max(low, spans[k][0]), min(high, spans[k][1]) + 1)
            k += 1

    previous = 0
    for number, values in raw:
        for gap in covered(previous + 1, number - 1):
            yield gap, ()
        yield number, values
        previous = number
    for gap in covered(previous + 1, 1 << 30):
        yield gap, ()


class _MergedFill:
    """Gives every cell of a merged range its top-left cell's value, one row at a time."""

    def __init__(self, merged: Sequence[tuple[int, int, int, int]]):
        self.pending = sorted(merged, reverse=True)  # popped from the end: by first row
        self.active: list[tuple[tuple[int, int, int, int], CellValue]] = []

    def apply(self, number: int, normal: list[CellValue]) -> None:
        if self.active:
            self.active = [(r, v) for r, v in self.active if r[2] >= number]
        while self.pending and self.pending[-1][0] <= number:
            merge = self.pending.pop()
            if merge[2] >= number:
                first_col = merge[1]
                value = normal[first_col] if merge[0] == number and first_col < len(normal) else None
                self.active.append((merge, value))
        for (_, first_col, _, last_col), value in self.active:
            if len(normal) <= last_col:
                normal.extend([None] * (last_col + 1 - len(normal)))
            for c in range(first_col, last_col + 1):
                normal[c] = value


def _early_date(serial: float, date1904: bool) -> date | datetime:
    """A date-formatted serial below 1 (a date Excel shows, not a time of day): 0 is 1904-01-01 in the
    1904 date system and 1899-12-30 in the 1900 one, negatives count back from there (as LibreOffice)."""
    epoch = datetime(1904, 1, 1) if date1904 else datetime(1899, 12, 30)
    # Excel keeps a time to the millisecond: rounding there drops the float's noise, not a fraction.
    moment = epoch + timedelta(milliseconds=round(serial * 86_400_000))
    return moment.date() if moment.time() == time(0) else moment


def _assemble(display: str, sheet: str, raw: Iterable[tuple[int, Sequence[object]]], meta: SheetMeta) -> SheetData:
    rows: list[SheetRow] = []
    fill = _MergedFill(meta.merged)
    merged = bool(meta.merged)
    corrections = _corrections(meta)
    for number, values in _with_merged_rows(raw, meta.merged) if merged else raw:
        # Text (most cells) without a call: _normal's first case, inline.
        normal = [((v[1:] if v.startswith(QUOTE) and NEUTRALISED.match(v) else v) or None) if type(v) is str
                  else _normal(v)
                  for v in values]
        fixes = corrections.get(number) if corrections else None
        if fixes:
            for c, fix in fixes:
                if c < len(normal):
                    normal[c] = fix(normal[c])
        if merged:
            fill.apply(number, normal)
        row = _kept(number, normal)
        if row is not None:
            rows.append(row)
    return _sheet_data(display, sheet, tuple(rows), meta)


_Fix = Callable[[CellValue], CellValue]


def _corrections(meta: SheetMeta) -> dict[int, list[tuple[int, _Fix]]]:
    """Per row, the cells whose value the sheet's XML knows better than the cell reader, in the
    order they apply: an error is no value (openpyxl gives "#DIV/0!", calamine ""); a number shown
    zero-padded is that text; rich text keeps the whitespace calamine trims; a date-formatted serial
    below 1 is a date, not a time of day."""
    found: dict[int, list[tuple[int, _Fix]]] = {}
    for r, c, _ in meta.errors:
        found.setdefault(r, []).append((c, _no_value))
    for r, widths in meta.zero_padded.items():
        found.setdefault(r, []).extend((c, partial(_zero_padded, width=width)) for c, width in widths.items())
    for r, texts in meta.rich_texts.items():
        found.setdefault(r, []).extend((c, _constant(unneutralised(text) or None)) for c, text in texts.items())
    for r, serials in meta.early_dates.items():
        found.setdefault(r, []).extend(
            (c, _constant(_early_date(serial, meta.date1904))) for c, serial in serials.items()
        )
    return found


def _no_value(_: CellValue) -> None:
    return None


def _zero_padded(value: CellValue, width: int) -> CellValue:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return str(value).zfill(width)
    return value


def _constant(value: CellValue) -> _Fix:
    return lambda _: value


def _sheet_data(display: str, sheet: str, rows: tuple[SheetRow, ...], meta: SheetMeta) -> SheetData:
    """The rows with the warnings about their cells: formulas without a cached value, error values."""
    sheet_data = SheetData(display, sheet, rows)
    warnings = tuple(
        (sheet_data.cell(r, c), "formula-uncached", _UNCACHED)
        for r, c in meta.uncached_formulas
    ) + tuple(
        (sheet_data.cell(r, c), "cell-error", f"the cell holds the error {shown}, so it is read as empty")
        for r, c, shown in meta.errors
    )
    return SheetData(display, sheet, rows, warnings)


def _text_sheet(display: str, sheet: str, rows: list[Sequence[object]], meta: SheetMeta) -> SheetData | None:
    """`_assemble`'s reading of a sheet holding only text (no number, date or boolean; no merged
    range, error value or zero-padded number, which the sheet-XML pass would have found), made a
    sheet at a time: a row whose every cell holds text that is neither blank nor neutralised
    (`unneutralised`) is its values as they are, found by searches over all the cells; only the
    other rows are read a cell at a time. None for any other sheet: `_assemble` reads it."""
    if meta.merged or meta.errors or meta.zero_padded or meta.early_dates or meta.rich_texts or not rows:
        return None
    width = len(rows[0])
    if set(map(len, rows)) != {width}:
        return None
    cells = list(chain.from_iterable(rows))
    if set(map(type, cells)) != {str}:
        return None
    texts = cast(list[str], cells)
    read: list[SheetRow | None] = list(map(tuple.__new__, repeat(SheetRow), zip(count(1), map(tuple, rows))))
    for index in _rows_to_read_by_cell(texts, width):
        read[index] = _text_row(index + 1, cast(Sequence[str], rows[index]))
    return _sheet_data(display, sheet, tuple(row for row in read if row is not None), meta)


def _rows_to_read_by_cell(texts: list[str], width: int) -> list[int]:
    """The indexes of the rows (of `width` cells) holding a blank cell (empty or whitespace) or a
    text starting with a quote (it may be neutralised), found by searches over all the cells."""
    found = {at // width for at in blank_texts(texts)}
    if QUOTE in "".join(texts):  # one search first: a test of every cell took a third of the whole
        found |= {at // width for at in indexes(list(map(str.startswith, texts, repeat(QUOTE))), True)}
    return sorted(found)


def _text_row(number: int, values: Sequence[str]) -> SheetRow | None:
    """One row of text read a cell at a time, as `_assemble` reads it; None for a blank row."""
    return _kept(number, [unneutralised(v) or None for v in values])


def _kept(number: int, normal: list[CellValue]) -> SheetRow | None:
    """A row of read values without its trailing empty cells; None for a blank row (every cell empty
    or whitespace)."""
    for v in normal:
        if v is not None and (type(v) is not str or v.strip(WHITESPACE)):
            break
    else:
        return None
    while normal and normal[-1] is None:
        normal.pop()
    return SheetRow(number, tuple(normal))


_UNCACHED = (
    "formula has no cached value (the file was saved by a program that does not calculate formulas), "
    "so the cell is read as empty; open and save the file in Excel or LibreOffice"
)


def _read_kind(source: Source, display: str, sheet: str | None, wanted: Wanted) -> SheetData:
    assert sheet is not None  # `loader.source.readers` names the sheet to read
    return read(source.path, display, sheet, engine=source.option("engine", "calamine"))


def _sheet_names(source: Source, display: str) -> list[str]:
    return sheet_names(source.path, display)


def _first_visible_sheet(source: Source, display: str) -> str | None:
    return first_visible_sheet(source.path, display)


KIND = SourceKind("xlsx", _read_kind, SUFFIXES, _sheet_names, _first_visible_sheet, advertised=(".xlsx", ".xlsm"))
