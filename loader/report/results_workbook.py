"""results.xlsx: a copy of the source rows with outcome columns, so a data officer can fix the
failed rows in their sheet and re-run.

One sheet per source sheet (or CSV file), rows at the same row numbers as in the source, read
exactly as the plan read them (the plan's `header_row`, `encoding` and `delimiter` per block),
with the sheet's merged ranges, frozen panes, column widths and header styling; then one set of
outcome columns per sheet, however many blocks read it: "loader status", "loader id", "loader
message" and "loader block" (the block of the record), headed on the header row, with widths that
fit and a filter. Every source row of a record gets its outcome (rows merged into one record too);
a row several blocks made records of shows the most urgent outcome (failed, skipped, then
written), the others named in its message ("also faculties: unchanged"). Failed and skipped rows
are filled; the cells a failure names are highlighted red with the message as a comment. A
"Summary" sheet comes first (`loader.report.results_summary`). Every value written goes through
`safe_cells`. A source that is not a file has no rows to copy: its records are
written instead (`loader.report.results_records`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from openpyxl import Workbook
from openpyxl.cell.cell import Cell, MergedCell
from openpyxl.comments import Comment
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import column_index_from_string
from openpyxl.worksheet.worksheet import Worksheet

from loader.apply.results import Outcome, RecordResult, Results
from loader.errors import LoaderError
from loader.files.safe_write import replacing
from loader.findings import Finding
from loader.places import CellRef, Place
from loader.plan.model import Plan, SourceReading
from loader.report.results_records import names_records, write_records
from loader.report.sheet_layout import LayoutError, apply_layout, read_layout
from loader.safe_cells import set_safe_cell
from loader.source.readers import read_sheet

FAILED_FILL = PatternFill("solid", start_color="FFC7CE", end_color="FFC7CE")
SKIPPED_FILL = PatternFill("solid", start_color="FFEB9C", end_color="FFEB9C")
DONE_FILL = PatternFill("solid", start_color="C6EFCE", end_color="C6EFCE")
_A1 = re.compile(r"^([A-Z]{1,3})(\d+)$")
_SHEET_TITLE_BAD = re.compile(r"[\[\]:*?/\\]")
_MAX_COLUMNS = 16_384 - 4  # room for the outcome columns within Excel's 16,384
OUTCOME_HEADERS = ("loader status", "loader id", "loader message", "loader block")
_URGENCY = {Outcome.FAILED: 0, Outcome.SKIPPED: 1, Outcome.CREATED: 2, Outcome.UPDATED: 3, Outcome.UNCHANGED: 4}
_WIDTHS = (16, 40, 60, 24)  # the most each outcome column takes: longer text wraps (a message) or is cut off


@dataclass(frozen=True)
class _Source:
    file: str
    sheet: str | None
    encoding: str | None = None
    delimiter: str | None = None
    block: str | None = None  # a source that is not a file: one sheet a block, of its records


# Where a result is written: (row, result, the source cells to mark as (row, column)).
_Placed = tuple[int, RecordResult, tuple[tuple[int, int], ...]]


def _cell_address(place: Place | None, sheet: str | None) -> tuple[int, int] | None:
    """(row, column) of a cell of `sheet`, or None for any other place."""
    if not isinstance(place, CellRef) or place.cell is None or place.sheet != sheet:
        return None
    match = _A1.match(place.cell)
    if not match:
        return None
    return int(match.group(2)), column_index_from_string(match.group(1))


def _title(source: _Source, used: set[str]) -> str:
    base = source.block or source.sheet or Path(source.file).stem
    base = _SHEET_TITLE_BAD.sub("_", base)[:31] or "Sheet"
    title, n = base, 2
    while title in used:
        suffix = f" ({n})"
        title, n = base[: 31 - len(suffix)] + suffix, n + 1
    used.add(title)
    return title


def _fill_for(outcome: Outcome) -> PatternFill | None:
    if outcome is Outcome.FAILED:
        return FAILED_FILL
    if outcome is Outcome.SKIPPED:
        return SKIPPED_FILL
    if outcome in (Outcome.CREATED, Outcome.UPDATED):
        return DONE_FILL
    return None


def _header_row(rows_with_records: Iterable[int], readings: Mapping[str, SourceReading], blocks: Iterable[str]) -> int:
    given = [readings[b].header_row for b in blocks if b in readings]
    if given:
        return min(given)
    return 1 if min(rows_with_records, default=2) > 1 else 0


FieldCells = Mapping[tuple[str, int], Mapping[str, CellRef]]  # (block, row) -> field -> its cell


def write_results_workbook(
    results: Results,
    path: Path,
    *,
    plan: Plan | None = None,
    field_cells: FieldCells | None = None,
    row_errors: Mapping[str, Sequence[Finding]] | None = None,
    base: Path | None = None,
    confine_to: Path | None = None,
) -> list[str]:
    """Write results.xlsx; returns notes about sources that could not be copied (they are listed
    without their source values). `plan` (the plan applied) says how each block's source was read
    and which rows merged into each record; without it, header row 1 and default reading.
    `field_cells` the cell each field of a row came from, so a failure's cells can be marked;
    `row_errors` per block, the errors of rows that never became records (marked "error").
    `confine_to`: a folder the copied sources must lie in (a saved plan's: it names its files)."""
    readings = {b.name: b.reading for b in plan.blocks} if plan is not None else {}
    also_rows = {r.ref: r.also_rows for r in plan.records() if r.also_rows} if plan is not None else {}
    field_cells = field_cells or {}
    row_errors = row_errors or {}
    base = base or Path.cwd()

    planned = {b.name: b for b in plan.blocks} if plan is not None else {}
    of_records = {name for name, b in planned.items() if names_records([b])}

    def source_of(block: str, file: str, sheet: str | None) -> _Source:
        reading = readings.get(block, SourceReading())
        return _Source(file, sheet, reading.encoding, reading.delimiter, block if block in of_records else None)

    by_source: dict[_Source, dict[str, list[RecordResult]]] = defaultdict(lambda: defaultdict(list))
    for block, (file, sheet) in results.block_sources.items():
        by_source[source_of(block, file, sheet)].setdefault(block, [])
    for result in results.records:
        file, sheet = results.block_sources.get(result.block, (result.source, None))
        by_source[source_of(result.block, file, sheet)][result.block].append(result)

    from loader.report.results_summary import write_summary

    workbook = Workbook()
    write_summary(workbook.active, results)
    notes: list[str] = []
    used: set[str] = set()
    for source, blocks in by_source.items():
        sheet = workbook.create_sheet(_title(source, used))
        header = _header_row((r.row for rs in blocks.values() for r in rs if r.row), readings, blocks)
        if source.block is not None:  # a query, a feed, a table: the records read, not a copy of rows
            width = write_records(sheet, [planned[source.block]], max(header, 1))
        else:
            width = _copy_source(sheet, source, base, max(header, 1), notes, confine_to)
        placed = _placements(blocks, also_rows, field_cells, source.sheet, results)
        _write_outcomes(sheet, blocks, placed, width, max(header, 1), header > 0)
        _write_row_errors(sheet, blocks, width, row_errors, source.sheet)
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as handle:  # 0600 before the copied source rows are written
        workbook.save(handle)
    return notes


def _copy_source(sheet: Worksheet, source: _Source, base: Path, header: int, notes: list[str],
                 confine_to: Path | None) -> int:
    """Copy the source rows in place, read as the plan read them, with the sheet's layout;
    returns the number of source columns (outcome columns go after them). With `confine_to`, only a
    file inside that folder (symlinks resolved) is copied: a saved plan naming /etc/passwd, or a
    link to it, never has it copied into a workbook."""
    file_path = Path(source.file) if Path(source.file).is_absolute() else base / source.file
    if confine_to is not None and not file_path.resolve().is_relative_to(confine_to.resolve()):
        notes.append(f"{source.file}: source rows not copied (the file lies outside the project folder {confine_to})")
        return 0
    try:
        data = read_sheet(file_path, source.file, source.sheet, delimiter=source.delimiter, encoding=source.encoding)
    except LoaderError as error:
        notes.append(f"{source.file}: source rows not copied ({error.message})")
        return 0
    width = 0
    for row in data.rows:
        width = max(width, len(row.values))
        for column, value in enumerate(row.values, start=1):
            if value is not None:
                set_safe_cell(sheet, row.number, column, value)
    if data.sheet is None:  # CSV: no layout to keep
        return width
    try:
        layout = read_layout(file_path, data.sheet, header)
    except LayoutError as error:
        notes.append(f"{source.file} › {data.sheet}: merged cells, frozen panes and header styles not copied ({error})")
        return width
    width = max(width, min(layout.last_column, _MAX_COLUMNS))
    apply_layout(sheet, layout, width)
    notes.extend(f"{source.file} › {data.sheet}: {note}" for note in layout.notes)
    return width


def _placements(
    blocks: Mapping[str, list[RecordResult]],
    also_rows: Mapping[str, tuple[tuple[str, int], ...]],
    field_cells: FieldCells,
    source_sheet: str | None,
    results: Results,
) -> dict[str, list[_Placed]]:
    """Per block of this sheet: every row an outcome goes on. A record's outcome goes on its own row
    and on each row merged into it (identical rows, or rows of another block reading this sheet)."""
    placed: dict[str, list[_Placed]] = {block: [] for block in blocks}
    elsewhere = [r for r in results.records if r.block not in blocks and r.ref in also_rows]
    for result in [*(r for rs in blocks.values() for r in rs), *elsewhere]:
        cells: tuple[tuple[int, int], ...] = ()
        if result.row and result.block in placed:
            wheres = result.cells or _cells_to_mark(result, field_cells.get((result.block, result.row), {}))
            cells = tuple(a for a in (_cell_address(w, source_sheet) for w in wheres) if a is not None)
            placed[result.block].append((result.row, result, cells))
        for block, row in also_rows.get(result.ref, ()):
            if block in placed:
                same_block = block == result.block
                shifted = tuple((row, column) for _, column in cells) if same_block else ()
                placed[block].append((row, result, shifted))
    return placed


def _write_outcomes(
    sheet: Worksheet,
    blocks: Mapping[str, list[RecordResult]],
    placed: Mapping[str, list[_Placed]],
    width: int,
    header: int,
    has_header: bool,
) -> None:
    """One set of outcome columns after the source's: a row's most urgent outcome, the others named."""
    column = width + 1
    if has_header:
        for offset, label in enumerate(OUTCOME_HEADERS):
            set_safe_cell(sheet, header, column + offset, label).font = Font(bold=True)
    per_row: dict[int, list[tuple[str, RecordResult, tuple[tuple[int, int], ...]]]] = defaultdict(list)
    for block in blocks:
        for row, result, cells in placed.get(block, ()):
            per_row[row].append((block, result, cells))
    for row, entries in per_row.items():
        entries.sort(key=lambda entry: _URGENCY[entry[1].outcome])
        block, first, cells = entries[0]
        also = [f"also {other}: {result.outcome.value}" for other, result, _ in entries[1:]]
        _write_result(sheet, row, column, first, cells, block, also)
        for _, result, marked in entries[1:]:
            _mark(sheet, result, marked, _message(result))
    # Records with no source row (e.g. from a hand-made plan) are listed under the last row.
    next_row = max(sheet.max_row + 2, header + 1)
    unplaced = [(block, r) for block, results in blocks.items() for r in results if not r.row]
    for offset, (block, result) in enumerate(unplaced):
        _write_result(sheet, next_row + offset, column, result, (), block, [])
    _fit_outcome_columns(sheet, column, header if has_header else 0)


def _fit_outcome_columns(sheet: Worksheet, column: int, header: int) -> None:
    """Widths that show the outcome columns' text (within bounds), and a filter over the whole sheet."""
    from openpyxl.utils import get_column_letter

    longest = [len(label) for label in OUTCOME_HEADERS]
    for values in sheet.iter_rows(min_row=header + 1, max_row=sheet.max_row, min_col=column,
                                  max_col=column + len(OUTCOME_HEADERS) - 1, values_only=True):
        for at, value in enumerate(values):
            if value is not None:
                longest[at] = max(longest[at], len(str(value)))
    for at, (size, most) in enumerate(zip(longest, _WIDTHS, strict=True)):
        sheet.column_dimensions[get_column_letter(column + at)].width = float(min(size + 2, most))
    if header:
        last = get_column_letter(column + len(OUTCOME_HEADERS) - 1)
        sheet.auto_filter.ref = f"A{header}:{last}{max(sheet.max_row, header)}"


def _write_row_errors(
    sheet: Worksheet,
    blocks: Mapping[str, list[RecordResult]],
    width: int,
    row_errors: Mapping[str, Sequence[Finding]],
    source_sheet: str | None,
) -> None:
    """Rows that never became records (a cell could not be read as asked): "error" and the message."""
    column = width + 1
    for block in blocks:
        for finding in row_errors.get(block, ()):
            address = _cell_address(finding.where, source_sheet)
            if finding.severity != "error" or address is None:
                continue
            row, col = address
            if sheet.cell(row=row, column=column).value is None:
                set_safe_cell(sheet, row, column, "error").fill = FAILED_FILL
                set_safe_cell(sheet, row, column + 2, finding.message)
                set_safe_cell(sheet, row, column + 3, block)
            cell = _anchor(sheet, row, col)
            cell.fill = FAILED_FILL
            previous = cell.comment.text + "\n" if cell.comment else ""
            cell.comment = Comment((previous + finding.message)[:30000], "loader")


def _anchor(sheet: Worksheet, row: int, column: int) -> Cell:
    """The cell at (row, column), or the top-left cell of the merged range holding it."""
    cell = sheet.cell(row=row, column=column)
    if isinstance(cell, MergedCell):
        for merged in sheet.merged_cells.ranges:
            if merged.min_row <= row <= merged.max_row and merged.min_col <= column <= merged.max_col:
                return sheet.cell(row=merged.min_row, column=merged.min_col)
    return cell


def _cells_to_mark(result: RecordResult, cells: Mapping[str, CellRef]) -> tuple[CellRef, ...]:
    """For a failure: the cells of the fields the service's message names, else of every field sent."""
    if result.outcome is not Outcome.FAILED or not cells:
        return ()
    text = result.message or ""
    named = [
        where for name, where in cells.items()
        if re.search(rf"(?<![\w.]){re.escape(name.rsplit('.', 1)[-1])}(?![\w])", text)
    ]
    if named:
        return tuple(named)
    return tuple(where for name, where in cells.items() if name.split(".", 1)[0] in result.fields) or tuple(
        cells.values()
    )


def _message(result: RecordResult) -> str | None:
    message = result.message
    if result.status is not None:
        message = f"HTTP {result.status}: {message}"
    if result.outcome in (Outcome.UPDATED, Outcome.CREATED) and result.fields:
        message = message or ("fields: " + ", ".join(result.fields))
    return message


def _write_result(sheet: Worksheet, row: int, column: int, result: RecordResult,
                  cells: Iterable[tuple[int, int]], block: str, also: Sequence[str]) -> None:
    """The outcome columns of one row: status, id, message (with `also`: other blocks' outcomes), block."""
    status_cell = set_safe_cell(sheet, row, column, result.outcome.value)
    set_safe_cell(sheet, row, column + 1, result.id)
    message = _message(result)
    set_safe_cell(sheet, row, column + 2, "; ".join([*([message] if message else []), *also]) or None)
    set_safe_cell(sheet, row, column + 3, block)
    fill = _fill_for(result.outcome)
    if fill is not None:
        status_cell.fill = fill
    if _mark(sheet, result, cells, message):
        status_cell.comment = Comment((message or result.outcome.value)[:30000], "loader")


def _mark(sheet: Worksheet, result: RecordResult, cells: Iterable[tuple[int, int]], message: str | None) -> bool:
    """Fill the source cells a failure or skip names, with its message as a comment; False for others."""
    if result.outcome not in (Outcome.FAILED, Outcome.SKIPPED):
        return False
    comment_text = (message or result.outcome.value)[:30000]
    fill = FAILED_FILL if result.outcome is Outcome.FAILED else SKIPPED_FILL
    for address in cells:
        cell = _anchor(sheet, *address)
        cell.fill = fill
        cell.comment = Comment(comment_text, "loader")
    return True
