"""A review workbook read back (`loader decide`): every row checked against the workbook's own index
before anything is taken from it (loader.report.review_workbook says what the workbook holds).

Rows may be sorted, filtered, edited or deleted; a deleted row is no decision. Columns are found by
their header, so moved columns are read too. Every problem is collected, each naming its row, and
raised as one error: a workbook with any bad row gives no decision at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from loader.errors import SheetError
from loader.places import PLACE_SEPARATOR
from loader.report.review_rows import (
    FORMAT,
    INDEX_HEADER,
    INDEX_SHEET,
    MARK,
    SHEET,
    choices_of,
    decided_value,
)
from loader.source.readers.rows import unneutralised
from loader.source.readers.xlsx import sheet_names
from loader.source.readers.xlsx_parts import read_sheet_meta
from loader.suggestions import did_you_mean
from loader.words import plural

NEEDED = ("decision", "reason", "until", "row id", "change digest")
NO_DECISION = ("", "apply")


@dataclass(frozen=True)
class IndexEntry:
    """A row as the plan wrote it (the hidden `loader` sheet), whatever a reviewer did to the visible one."""

    row_id: str
    kind: str
    entity: str
    key: str
    field: str
    digest: str


@dataclass(frozen=True)
class ReviewedRow:
    """A row with a decision other than apply: `decision` as chosen (skip, defer, sheet, platform)."""

    row: int  # its row number in the sheet as saved
    entry: IndexEntry
    decision: str
    reason: str
    until: date | None


@dataclass(frozen=True)
class ReviewedWorkbook:
    plan_digest: str
    environment: str  # the loader.yaml name the plan was made for
    rows: tuple[ReviewedRow, ...]
    index: tuple[IndexEntry, ...]


def read_review_workbook(path: Path) -> ReviewedWorkbook:
    """The decided rows of the review workbook at `path`, every row checked first (see the module docstring).

    The workbook is bounded as a source workbook is (loader.source.readers.limits): its two sheets'
    XML is scanned first, so a zip bomb, a huge shared string or a cell at XFD1048576 is refused
    before calamine allocates for it."""
    if not path.exists():
        raise SheetError("no such file", where=str(path))
    try:
        names = sheet_names(path)
    except SheetError as error:
        raise _not_review(path, error.message) from None
    if INDEX_SHEET not in names or SHEET not in names:
        raise _not_review(path, f"it has no `{SHEET}` sheet and hidden `{INDEX_SHEET}` sheet")
    for name in (INDEX_SHEET, SHEET):
        read_sheet_meta(path, name, str(path))
    sheets = _sheets(path)
    head, index = _read_index(path, _rows(path, sheets, INDEX_SHEET))
    reviewed = _Checker(path, head["plan digest"], index).check(_rows(path, sheets, SHEET))
    return ReviewedWorkbook(head["plan digest"], head["environment"], reviewed, tuple(index.values()))


def _sheets(path: Path) -> Any:
    """The workbook, read by calamine (the loader's reader of sheets: 17,000 rows in a fraction of a
    second, where openpyxl took seconds)."""
    import python_calamine

    try:
        return python_calamine.CalamineWorkbook.from_path(str(path))
    except BaseException as error:  # calamine raises several unrelated types; a Rust panic is a BaseException
        if not isinstance(error, Exception) and type(error).__name__ != "PanicException":
            raise
        raise _not_review(path, f"it cannot be read as a workbook ({type(error).__name__})") from None


def _rows(path: Path, sheets: Any, name: str) -> list[list[Any]]:
    """A sheet's rows from row 1 on, each from column A on."""
    try:
        data = sheets.get_sheet_by_name(name)
        start = data.start
        rows = [list(values) for values in data.iter_rows()] if start is not None else []
    except BaseException as error:
        if not isinstance(error, Exception) and type(error).__name__ != "PanicException":
            raise
        raise _not_review(path, f"its sheet {name!r} cannot be read ({type(error).__name__})") from None
    if start is not None and start[1]:  # columns count from the first used one
        rows = [[""] * start[1] + values for values in rows]
    return rows


def _not_review(path: Path, why: str) -> SheetError:
    return SheetError(f"not a review workbook: {why}", where=str(path),
                      hint="give the workbook `loader plan --review FILE.xlsx` wrote (saved as .xlsx)")


def _read_index(path: Path, values: Sequence[Sequence[Any]]) -> tuple[dict[str, str], dict[str, IndexEntry]]:
    if not values or not values[0] or _text(values[0][0]) != MARK or _int(values[0][1]) != FORMAT:
        raise _not_review(path, f"its `{INDEX_SHEET}` sheet does not name it one (format {FORMAT})")
    header = [at for at, row in enumerate(values) if row and _text(row[0]) == INDEX_HEADER[0]]
    if not header:
        raise _not_review(path, f"its `{INDEX_SHEET}` sheet has no index of rows")
    head = {_text(row[0]): _text(row[1]) for row in values[1:header[0]] if len(row) >= 2 and row[0]}
    if not head.get("plan digest") or not head.get("environment"):
        raise _not_review(path, f"its `{INDEX_SHEET}` sheet has no plan digest or environment")
    index: dict[str, IndexEntry] = {}
    for row in values[header[0] + 1:]:
        cells = [_token(v) for v in (list(row) + [None] * 6)[:6]]
        if cells[0]:
            index[cells[0]] = IndexEntry(*cells)
    return head, index


class _Checker:
    """Checks every row of the `Review` sheet, collecting the problems of all of them."""

    def __init__(self, path: Path, plan_digest: str, index: dict[str, IndexEntry]) -> None:
        self.path, self.index = path, index
        self.tag = plan_digest.removeprefix("sha256:")[:12]
        self.problems: list[str] = []

    def check(self, rows: Sequence[Sequence[Any]]) -> tuple[ReviewedRow, ...]:
        if not rows:
            raise _not_review(self.path, f"its `{SHEET}` sheet is empty")
        header = [_text(v).strip().lower() for v in rows[0]]
        missing = [name for name in NEEDED if name not in header]
        if missing:
            raise _not_review(self.path, f"its `{SHEET}` sheet has no column {missing[0]!r}")
        at = {name: header.index(name) for name in NEEDED}
        decided = [r for number, row in enumerate(rows[1:], 2) if (r := self._row(number, row, at)) is not None]
        self._repeats(decided)
        if self.problems:
            raise self._error()
        return tuple(decided)

    def _row(self, number: int, row: Sequence[Any], at: dict[str, int]) -> ReviewedRow | None:
        def cell(name: str) -> Any:
            return row[at[name]] if at[name] < len(row) else None

        decision = _text(cell("decision")).strip().lower()
        row_id, digest = _token(cell("row id")), _token(cell("change digest"))
        if not row_id:
            if decision not in NO_DECISION:
                self._problem(number, "it has no row id: copy whole rows, never type a row in")
            return None
        entry = self._entry(number, row_id, digest)
        if entry is None:
            return None
        choices = choices_of(entry.kind)
        if decision not in (*choices, ""):
            self._problem(number, f"decision {_text(cell('decision'))!r} is not one of {', '.join(choices)} "
                                  f"(empty is apply){did_you_mean(decision, choices)}")
            return None
        if decision in NO_DECISION:
            return None
        until = self._until(number, cell("until"), decision)
        if decision in ("skip", "defer", "platform", "sheet") and not entry.digest:
            self._problem(number, "this change has no digest (a personal value the plan does not hold, or "
                                  "no history key when it was planned): it can be applied, not skipped or "
                                  "deferred; plan again where the history key is set")
            return None
        if decision in ("create", "same") and not decided_value(entry.kind, decision, entry.digest):
            self._problem(number, f"`{decision}` cannot be recorded for this row (no history key when it was "
                                  "planned, or `same` as an earlier row of the sheet, not a live record): "
                                  "plan again where the history key is set, or decide `create`")
            return None
        return ReviewedRow(number, entry, decision, _text(cell("reason")).strip(), until)

    def _entry(self, number: int, row_id: str, digest: str) -> IndexEntry | None:
        tag = row_id.rsplit("-", 1)[0]
        if tag != self.tag:
            self._problem(number, f"row id {row_id!r} is from another plan's review workbook (plan {tag}…, "
                                  f"this workbook's plan is {self.tag}…): review the rows of one workbook")
            return None
        entry = self.index.get(row_id)
        if entry is None:
            self._problem(number, f"row id {row_id!r} does not exist in this workbook's plan")
        elif digest != entry.digest:
            self._problem(number, f"its change digest does not match the change row id {row_id!r} names "
                                  "(edited, or copied from another workbook)")
            return None
        return entry

    def _until(self, number: int, value: Any, decision: str) -> date | None:
        if value is None or value == "":
            if decision == "defer":
                self._problem(number, "a defer needs a date in `until` (YYYY-MM-DD)")
            return None
        parsed = _date(value)
        if parsed is None:
            self._problem(number, f"`until` {_text(value)!r} is not a date (YYYY-MM-DD)")
        return parsed

    def _repeats(self, decided: list[ReviewedRow]) -> None:
        """A row id twice (a row copied) with two different decisions cannot be both."""
        seen: dict[str, ReviewedRow] = {}
        for row in decided:
            first = seen.setdefault(row.entry.row_id, row)
            if first is not row and (first.decision, first.until) != (row.decision, row.until):
                self._problem(row.row, f"it repeats row {first.row} (row id {row.entry.row_id!r}) "
                                       "with another decision: keep one of them")

    def _problem(self, number: int, text: str) -> None:
        self.problems.append(f"{SHEET}{PLACE_SEPARATOR}row {number}: {text}")

    def _error(self) -> SheetError:
        if len(self.problems) == 1:
            sheet_row, text = self.problems[0].split(": ", 1)
            return SheetError(f"{text}; nothing was recorded", where=f"{self.path}{PLACE_SEPARATOR}{sheet_row}")
        listed = "\n  ".join(self.problems)
        return SheetError(f"{plural(len(self.problems), 'row')} cannot be recorded; nothing was recorded:\n  {listed}",
                          where=str(self.path))


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return unneutralised(value) if isinstance(value, str) else str(value)


def _token(value: Any) -> str:
    """An id, key token or digest as written."""
    return _text(value).strip()


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _date(value: Any) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        from openpyxl.utils.datetime import from_excel

        converted = from_excel(value)
        return converted.date() if isinstance(converted, datetime) else None
    try:
        return date.fromisoformat(_text(value).strip())
    except ValueError:
        return None
