"""Markdown tables laid out into parts of a bounded size, each part complete Markdown.

A table is cut between rows: each piece repeats the table's head, the first piece under the table's
heading, the others under its `continued` heading. A single row too long for a part is cut short
with a note (`fit_row`). `trimmed` keeps the rows of the tables that may be shortened up to a budget
of characters, in order, and says under each shortened table how many rows it left out and where
they all are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

_CUT = " … (cut: too long for this report; the full text is in plan.json and the HTML report) |\n"
FULL_LIST = "the HTML report (`--html plan.html`) and plan.json list them all"


@dataclass(frozen=True)
class Table:
    """A table the parts are cut from: each piece complete, `heading` on the first, `continued` on the others.

    `lead` (a section's or block's heading) goes before the first piece, so no part ends on a bare
    heading; `note` after the last. `trim`: rows may be left out when the report must be shorter.
    """

    heading: str
    continued: str
    head: str
    rows: Sequence[str]
    fold: str | None
    lead: str = ""
    note: str = ""
    trim: bool = False
    what: str = "rows"  # what a row is, in the note of a trimmed table ("records to update")
    when_trimmed: str = ""  # added to the note when rows are left out (a sample of them all)


def layout(first: str, tables: Sequence[Table], budget: int) -> list[list[str]]:
    """The texts of each part: `first` (the summary) opens part 1, then the tables in order."""
    parts: list[list[str]] = [[first]]
    size = len(first)
    for table in tables:
        fixed = len(table.lead) + max(len(table.heading), len(table.continued)) + len(table.head) + len(table.note)
        fixed += 200
        pending = [fit_row(row, max(budget - fixed, 4 * len(_CUT))) for row in table.rows]
        if not pending:
            text = table.lead + table.heading + table.note
            if size and size + len(text) > budget:
                parts.append([])
                size = 0
            parts[-1].append(text)
            size += len(text)
            continue
        first_piece = True
        while pending:
            heading = table.lead + table.heading if first_piece else table.continued
            room = budget - size - fixed
            take, used = 0, 0
            while take < len(pending) and used + len(pending[take]) <= room:
                used += len(pending[take])
                take += 1
            if take == 0 and size > 0:
                parts.append([])
                size = 0
                continue
            take = max(take, 1)
            text = close(heading, table.head, pending[:take], table.fold, table.note if take == len(pending) else "")
            parts[-1].append(text)
            size += len(text)
            pending, first_piece = pending[take:], False
            if pending:
                parts.append([])
                size = 0
    return parts


def trimmed(tables: Sequence[Table], allowance: int) -> list[Table]:
    """The tables with the rows of trimmable ones kept, in order, while they fit in `allowance` characters."""
    out = []
    left = allowance
    for table in tables:
        if not table.trim:
            out.append(table)
            continue
        kept = 0
        while kept < len(table.rows) and len(table.rows[kept]) <= left:
            left -= len(table.rows[kept])
            kept += 1
        if kept == len(table.rows):
            out.append(table)
            continue
        note = f"… and {len(table.rows) - kept:,} more {table.what}: {FULL_LIST}.\n\n"
        out.append(replace(table, rows=table.rows[:kept], note=note + table.when_trimmed + table.note))
        left = 0  # what follows a shortened table would read out of order
    return out


def trimmable_size(tables: Sequence[Table]) -> int:
    return sum(len(row) for t in tables if t.trim for row in t.rows)


def fixed_size(tables: Sequence[Table]) -> int:
    """Characters of the tables besides trimmable rows (an estimate: heads are repeated on each piece)."""
    return sum(len(t.lead) + len(t.heading) + 2 * len(t.head) + len(t.note) + len(t.when_trimmed) + 200
               + (0 if t.trim else sum(len(row) for row in t.rows)) for t in tables)


def fit_row(row: str, room: int) -> str:
    """The row as is when it has at most `room` characters, else cut short with a note.

    The cut never splits a backslash escape and closes a code span it falls in, so the row stays
    one well-formed table row. Backticks in the cells are escaped (plain text) or replaced (code
    spans) by the Markdown renderer, so every unescaped backtick opens or closes a code span.
    """
    if len(row) <= room:
        return row
    keep = room - len(_CUT) - 1  # 1: a backtick closing a code span
    at, in_code = 0, False
    while at < keep:
        step = 1
        if row[at] == "`":
            in_code = not in_code
        elif row[at] == "\\" and (not in_code or row[at + 1:at + 2] == "|"):
            step = 2  # `\x` escapes in plain text, `\|` in code spans
        if at + step > keep:
            break
        at += step
    if in_code and row[at - 1] == "`":  # nothing kept of the span: leave it out
        at, in_code = at - 1, False
    return row[:at] + ("`" if in_code else "") + _CUT


def close(heading: str, table_head: str, rows: Sequence[str], fold: str | None, note: str = "") -> str:
    table = table_head + "".join(rows)
    if fold:
        return f"{heading}<details><summary>{fold}</summary>\n\n{table}\n</details>\n\n{note}"
    return f"{heading}{table}\n{note}"
