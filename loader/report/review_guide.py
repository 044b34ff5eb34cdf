"""The review workbook's first sheet, "How to review": what a row is, how to decide, what to do after.

A registrar opens the workbook on this sheet and needs no briefing: the plan it belongs to, one
line per column of the `Review` sheet, the choices of the decision column and the command that
records them (`loader decide`). Words only: the rows themselves are on the `Review` sheet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loader.plan.model import Plan
from loader.report.review_rows import CHANGE_WORDS, SHEET
from loader.safe_cells import xlsx_row
from loader.words import plural

if TYPE_CHECKING:
    from openpyxl.worksheet.worksheet import Worksheet

GUIDE_SHEET = "How to review"
WIDTH = 110  # the text column's width, in characters: a line wraps within it

_COLUMNS = (
    ("block", "the part of the mapping the record belongs to (schools, courses, …)"),
    ("record", "the record, by its key (a code, an id)"),
    ("change", "what the loader proposes: " + ", ".join(CHANGE_WORDS.values())),
    ("field", "the field that changes; a new record's row is about all its fields"),
    ("current value", "what the platform holds now (empty for a new record)"),
    ("proposed value", "what the spreadsheet says it should be; a new record's values, a line each"),
    ("decision", "your decision (see below); leave it empty to apply the change"),
    ("reason", "why, in a few words: it is kept with the decision"),
    ("until", "for defer: the date (YYYY-MM-DD) before which the change waits"),
    ("rule, place", "the mapping line that made the change, and the spreadsheet row it comes from"),
)
_DECISIONS = (
    ("empty or apply", "the change is made at the next apply"),
    ("skip", "the change is not made, now or later, while the spreadsheet proposes this value"),
    ("defer", "the change waits until the date in the until column"),
    ("sheet (a conflict)", "someone changed the field in the platform too: the spreadsheet's value wins"),
    ("platform (a conflict)", "the platform's value stays; the spreadsheet's value is not written"),
)


def write_guide(sheet: Worksheet, plan: Plan, digest: str, rows: int) -> None:
    """Fill `sheet` (the workbook's first) with the guide to the plan of `digest` and its `rows` rows."""
    from openpyxl.styles import Alignment, Font

    sheet.title = GUIDE_SHEET
    lines: list[tuple[str, str, bool]] = [
        ("How to review these changes", "", True),
        ("", f"{plural(rows, 'change')} the loader proposes for environment {plan.env_name}, one per row of the "
             f"{SHEET} sheet (the next tab). Plan digest {digest}.", False),
        ("", "Read each row, decide, save the workbook, then have it recorded (last step).", False),
        ("", "", False),
        ("Columns", "", True),
        *((name, text, False) for name, text in _COLUMNS),
        ("", "", False),
        ("Decisions", "", True),
        *((name, text, False) for name, text in _DECISIONS),
        ("", "", False),
        ("Afterwards", "", True),
        ("", "Save the workbook (keep it .xlsx), then run:  loader decide review.xlsx --by \"Your Name\"  "
             "and commit decisions.yaml (or send the workbook to whoever does).", False),
        ("", "You may sort, filter and hide rows, and delete rows you have no decision about. Do not edit "
             "the hidden columns: they tie each row to the change it decides.", False),
    ]
    for name, text, title in lines:
        sheet.append(xlsx_row([name, text]))
        if title:
            sheet.cell(sheet.max_row, 1).font = Font(bold=True, size=14 if sheet.max_row == 1 else 12)
        else:
            sheet.cell(sheet.max_row, 1).font = Font(bold=True)
    top = Alignment(wrap_text=True, vertical="top")
    for cells in sheet.iter_rows():
        for cell in cells:
            cell.alignment = top
    sheet.column_dimensions["A"].width = 24
    sheet.column_dimensions["B"].width = WIDTH
    sheet.page_setup.orientation = "landscape"
