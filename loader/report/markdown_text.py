"""Markdown text of a plan's values: escaped so that no cell can break its table or inject HTML,
links or a comment into a pull request, and cut at CELL_LIMIT characters (`…✂`).

In code spans pipes are escaped and backticks replaced; plain text has Markdown and HTML specials
escaped; control characters are shown as escapes (`view.clean`), so every value is one line.
"""

from __future__ import annotations

from loader.plan.masking import HIDDEN
from loader.report.view import cell_text, clean, cut, value_text

CELL_LIMIT = 200  # characters of one value in a cell; longer ones end in the cut marker
MESSAGE_LIMIT = 1_000  # characters of a finding's message in a cell


def value_cell(value: object) -> str:
    """A create's value in its cell: in a code span, cut at CELL_LIMIT; a masked value as it is."""
    if value == HIDDEN:
        return HIDDEN
    text = cell_text(value)
    return f"`{code(cut(text, CELL_LIMIT))}`" if text else ""


def diff_value(value: object) -> str:
    """An update's old or new value as JSON text in a code span, cut at CELL_LIMIT; a masked value as it is."""
    text = value_text(value)
    return text if text == HIDDEN else f"`{code(cut(text, CELL_LIMIT))}`"


def code(text: str) -> str:
    """Text inside `code` spans: backticks and pipes cannot close the span or the table cell; one line."""
    return clean(text).replace("`", "'").replace("|", "\\|")


def cell(text: str) -> str:
    """Plain text in a table cell, with Markdown and HTML specials escaped; one line."""
    out = clean(text).replace("\\", "\\\\").replace("|", "\\|")
    for special in "`*_[]<>#&~":
        out = out.replace(special, "\\" + special)
    return out
