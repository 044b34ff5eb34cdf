"""The review workbook's sheets as openpyxl builds them: "How to review" first (`review_guide`), the
`Review` sheet a reviewer edits (frozen header and record columns, filters, widths that fit with
long values wrapped, drop-downs, hidden row id and digest columns, landscape and one page wide when
printed) and the hidden `loader` sheet with the plan's identity and the index of the rows
(loader.report.review_workbook)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby
from typing import TYPE_CHECKING, Any

from loader.plan.model import Plan
from loader.report.review_rows import (
    DECISION_COLUMN,
    FORMAT,
    HEADER,
    INDEX_FIRST_ROW,
    INDEX_HEADER,
    INDEX_SHEET,
    MARK,
    MAX_WIDTH,
    MIN_WIDTH,
    SHEET,
    ReviewRow,
)
from loader.safe_cells import xlsx_row

if TYPE_CHECKING:
    from openpyxl import Workbook
    from openpyxl.worksheet.worksheet import Worksheet

WIDTH_SAMPLE = 2000  # rows looked at to fit a column's width
UNTIL_COLUMN = HEADER.index("until") + 1
HIDDEN_HEADERS = ("row id", "change digest")
# The widest each column before the decision may be (its longer values wrap): together they keep the
# decision column within 120 character widths of the left edge, on a laptop's screen.
LEADING_WIDTHS = {"block": 14, "record": 20, "change": 12, "field": 22, "current value": 24, "proposed value": 28}
FROZEN = "C2"  # the header row, and the block and record columns
REASON_WIDTH = 30


def build_review_book(plan: Plan, digest: str, rows: Sequence[ReviewRow],
                      shown: Sequence[Mapping[str, Any]]) -> Workbook:
    """The workbook: "How to review", then `rows` with their `shown` cells by column name (decision,
    reason and until empty), then the hidden index."""
    from openpyxl import Workbook

    from loader.report.review_guide import write_guide

    book = Workbook()
    guide = book.active
    assert guide is not None
    write_guide(guide, plan, digest, len(rows))
    sheet = book.create_sheet(SHEET)
    sheet.append(list(HEADER))
    for values in shown:
        sheet.append(xlsx_row([values.get(name) for name in HEADER]))
    _dress(sheet, rows)
    _index_sheet(book, plan, digest, rows)
    book.properties.title = MARK
    book.properties.subject = digest
    return book


def _dress(sheet: Worksheet, rows: Sequence[ReviewRow]) -> None:
    from openpyxl.styles import Alignment, Font, PatternFill
    from openpyxl.utils import get_column_letter

    for cell in sheet[1]:
        cell.font = Font(bold=True)
        cell.fill = PatternFill("solid", fgColor="DDEBF7")
    decision = PatternFill("solid", fgColor="FFF2CC")  # the cells a reviewer fills in
    for name in ("decision", "reason", "until"):
        sheet.cell(1, HEADER.index(name) + 1).fill = PatternFill("solid", fgColor="FFD966")
    wrapped = Alignment(wrap_text=True, vertical="top")
    for cells in sheet.iter_rows(min_row=2, max_row=len(rows) + 1):
        for cell in cells:
            cell.alignment = wrapped
            if HEADER[cell.column - 1] in ("decision", "reason", "until"):
                cell.fill = decision
    sheet.freeze_panes = FROZEN
    _print_setup(sheet)
    last = get_column_letter(len(HEADER))
    sheet.auto_filter.ref = f"A1:{last}{len(rows) + 1}"
    for column, width in enumerate(_widths(sheet, len(rows)), 1):
        dimension = sheet.column_dimensions[get_column_letter(column)]
        dimension.width = width
        dimension.hidden = HEADER[column - 1] in HIDDEN_HEADERS
    _drop_downs(sheet, rows)
    until = get_column_letter(UNTIL_COLUMN)
    for number in range(2, len(rows) + 2):
        sheet[f"{until}{number}"].number_format = "yyyy-mm-dd"


def _widths(sheet: Worksheet, count: int) -> Iterator[float]:
    """Each column's width: its longest text among the header and the first rows, within bounds."""
    longest = [len(h) for h in HEADER]
    for values in sheet.iter_rows(min_row=2, max_row=min(count, WIDTH_SAMPLE) + 1, values_only=True):
        for at, value in enumerate(values):
            if value is not None:
                longest[at] = max(longest[at], max(len(line) for line in str(value).split("\n")))
    for at, size in enumerate(longest):
        extra = 10 if at + 1 in (DECISION_COLUMN, UNTIL_COLUMN) else 2  # room for the drop-down's arrow, a date
        least = REASON_WIDTH if HEADER[at] == "reason" else MIN_WIDTH  # room to write a reason in
        yield float(min(max(size + extra, least), LEADING_WIDTHS.get(HEADER[at], MAX_WIDTH)))


def _print_setup(sheet: Worksheet) -> None:
    """Landscape, one page wide (as many pages long as it takes), the header row on every page."""
    from openpyxl.worksheet.properties import PageSetupProperties

    sheet.page_setup.orientation = "landscape"
    sheet.page_setup.fitToWidth = 1
    sheet.page_setup.fitToHeight = 0
    sheet.sheet_properties.pageSetUpPr = PageSetupProperties(fitToPage=True)
    sheet.print_title_rows = "1:1"


def _drop_downs(sheet: Worksheet, rows: Sequence[ReviewRow]) -> None:
    """The decision drop-downs (one per run of rows with the same choices) and the until dates."""
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.datavalidation import DataValidation

    column = get_column_letter(DECISION_COLUMN)
    numbered = list(enumerate(rows, 2))
    lists: dict[tuple[str, ...], DataValidation] = {}
    for choices, run in groupby(numbered, key=lambda item: item[1].choices):
        numbers = [n for n, _ in run]
        if choices not in lists:
            lists[choices] = DataValidation(
                type="list", formula1='"' + ",".join(choices) + '"', allow_blank=True, showErrorMessage=True,
                showInputMessage=True,
                errorTitle="decision", error=f"choose one of: {', '.join(choices)} (empty: apply)",
                promptTitle="decision", prompt=f"{', '.join(choices)}; empty is apply")
            sheet.add_data_validation(lists[choices])
        lists[choices].add(f"{column}{numbers[0]}:{column}{numbers[-1]}")
    if rows:
        until = get_column_letter(UNTIL_COLUMN)
        dates = DataValidation(type="date", operator="greaterThan", formula1="DATE(2000,1,1)", allow_blank=True,
                               showErrorMessage=True, error="a date (YYYY-MM-DD), for a defer")
        dates.add(f"{until}2:{until}{len(rows) + 1}")
        sheet.add_data_validation(dates)


def _index_sheet(book: Workbook, plan: Plan, digest: str, rows: Sequence[ReviewRow]) -> None:
    index = book.create_sheet(INDEX_SHEET)
    index.sheet_state = "hidden"
    head: list[list[Any]] = [
        [MARK, FORMAT],
        ["plan digest", digest],
        ["environment", plan.env_name],
        ["service environment", plan.environment],
        ["created at", plan.created_at],
        [],
    ]
    for number, values in enumerate(head, 1):
        for column, value in enumerate(xlsx_row(values), 1):
            index.cell(row=number, column=column, value=value)
    for column, name in enumerate(INDEX_HEADER, 1):
        index.cell(row=INDEX_FIRST_ROW, column=column, value=name)
    for row in rows:
        index.append(xlsx_row([row.row_id, row.kind, row.entity, row.key_token, row.field, row.digest]))
