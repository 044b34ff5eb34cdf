"""A block's part of the terminal view: its rule lines, then its rows, each kind of row with a quota.

A line is a `Line`: a prefix kept whole (`  ~ `, `      `) and the text after it, which a narrow
terminal wraps under itself (a hanging indent). The rule lines come first: one per mapping line
for the changes to existing records, and one line for all the block's creates (the fields they
set, the mapping lines that set them). Then the rows (`RowKind`: each kind of change to existing
records (renumber, retire, update, status move, kept platform edit), records dropped from the
source (retired, released, kept), blocked records and rows, creates): every kind is one `RowKind`
of the same shape, so a new kind of row is one more entry in `row_kinds`, laid out like the
others. The rows shown share one budget, dealt to the kinds in turn, so no kind with rows is ever
hidden behind another, and are listed in the block's order (existing records first); what is
left out is counted per kind ("… and 7 more: 1 dropped, kept, 6 to create"). Every text from the
plan is made safe (`view.clean`) and markup-escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import count
from typing import NamedTuple

from rich.markup import escape

from loader.plan.model import BlockedRow, BlockPlan, RecordPlan
from loader.report.rules import RuleGroup, rule_groups
from loader.report.view import (
    KEPT_DROPPED,
    DroppedRow,
    blocked_reason,
    blocked_records,
    clean,
    creates,
    dropped_rows,
    key_label,
    label,
    notes,
    record_place,
    row_reason,
    short_place,
    updates,
    value_text,
)
from loader.words import plural


class Line(NamedTuple):
    """One line of the terminal view: `prefix` (rich markup, never wrapped) and `text` (markup,
    wrapped under itself on a narrow terminal)."""

    prefix: str
    text: str


FIELD = "      "  # the indent of a record's fields and notes


Row = tuple[int, Callable[[], list[Line]]]  # a row's place in the block's reading order, and its lines


@dataclass(frozen=True)
class RowKind:
    """One kind of row a block lists: its words for what was left out ("6 to create") and its rows,
    each its place in the block's order and a function giving that row's lines (called only for the
    rows shown)."""

    words: str
    rows: Sequence[Row]
    one: str | None = None  # the words for one row, where they differ ("1 status move")


def row_kinds(block: BlockPlan) -> list[RowKind]:
    """The block's kinds of rows in the order a reviewer reads them: existing records first, creates last."""
    place = count()
    changed: dict[str, list[Row]] = {words: [] for words in _CHANGE_WORDS.values()}
    for record in updates(block):
        changed[_CHANGE_WORDS[_change_word(record)]].append((next(place), partial(_record_lines, "~", record, block)))
    dropped: dict[str, list[Row]] = {words: [] for words in _DROPPED_WORDS.values()}
    for row in dropped_rows(block):
        dropped[_DROPPED_WORDS.get(row.outcome.split(":", 1)[0], "dropped, kept")].append(
            (next(place), partial(_dropped_lines, row)))
    blocked: list[Row] = [(next(place), partial(_blocked_lines, r, block)) for r in blocked_records(block)]
    blocked += [(next(place), partial(_blocked_row_lines, row, block)) for row in block.blocked_rows]
    created: list[Row] = [(next(place), partial(_record_lines, "+", r, block)) for r in creates(block)]
    return [*(RowKind(words, rows, _ONE.get(words)) for words, rows in (*changed.items(), *dropped.items())),
            RowKind("blocked", blocked), RowKind("to create", created)]


def quotas(sizes: Sequence[int], limit: int) -> list[int]:
    """How many rows of each kind to show: `limit` rows dealt to the kinds in turn, one at a time,
    so a small kind is shown whole and a large one takes what the others leave; every kind with
    rows gets at least one, even past `limit`."""
    shown = [0] * len(sizes)
    left = max(limit, sum(1 for n in sizes if n))
    while left > 0:
        dealt = False
        for n, size in enumerate(sizes):
            if left and shown[n] < size:
                shown[n] += 1
                left -= 1
                dealt = True
        if not dealt:
            break
    return shown


def block_lines(block: BlockPlan, limit: int) -> list[Line]:
    """The block's rule lines, then its rows within `limit`, what was left out, and what is only counted."""
    lines = rule_lines(block)
    kinds = row_kinds(block)
    shown = quotas([len(k.rows) for k in kinds], limit)
    chosen = sorted((row for kind, n in zip(kinds, shown, strict=True) for row in kind.rows[:n]),
                    key=lambda row: row[0])  # each kind's share, in the block's order
    for _, row in chosen:
        lines += row()
    left = [(len(k.rows) - n, k) for k, n in zip(kinds, shown, strict=True) if len(k.rows) > n]
    if left:
        words = ", ".join(plural(n, kind.one or kind.words, kind.words) for n, kind in left)
        lines.append(Line("  … ", f"and {sum(n for n, _ in left):,} more: {words}; write them all with "
                                  "--report plan.md or --html plan.html"))
    seen = sum(d.seen for d in block.dropped)
    if seen:
        lines.append(Line("  ", f"[dim]- {seen:,} dropped from the source, shown before[/dim]"))
    if block.not_in_source_records:
        lines.append(Line("  ? ", f"[dim]{block.not_in_source:,} not managed here: live records no mapping of this "
                                  "project loads (listed in plan.json and the HTML page)[/dim]"))
    return lines


def rule_lines(block: BlockPlan) -> list[Line]:
    """A line per mapping line that changed existing records, then one line for all the block's creates."""
    groups = rule_groups(block, profiles=False)
    lines = [_update_rule(g) for g in groups if g.kind != "create"]
    made = [g for g in groups if g.kind == "create"]
    if made:
        n = max(len(g.records) for g in made)
        fields = ", ".join(escape(clean(g.field)) for g in made)
        where = _places([g.place for g in made])
        lines.append(Line(f"  {where}", f"[green]{plural(n, 'record')} created[/green], setting {fields}"))
    return lines


def _update_rule(group: RuleGroup) -> Line:
    where = f"[dim]{escape(group.place)}[/dim]  " if group.place else ""
    n = len(group.records)
    return Line(f"  {where}", f"{escape(clean(group.text))}  [yellow]{plural(n, 'record')} changed[/yellow]")


def _places(places: Sequence[str]) -> str:
    """Mapping lines folded per file: `mappings/curriculum.yaml:13–16`; "" when there are none."""
    lines: dict[str, list[int]] = {}
    for where in places:
        file, _, line = where.rpartition(":")
        if file and line.isdigit():
            lines.setdefault(file, []).append(int(line))
    if not lines:
        return ""
    folded = [f"{file}:{min(n)}" + (f"–{max(n)}" if max(n) != min(n) else "") for file, n in lines.items()]
    return f"[dim]{escape(clean(', '.join(folded)))}[/dim]  "


def _dropped_lines(dropped: DroppedRow) -> list[Line]:
    name = f" {escape(dropped.name)}" if dropped.name else ""
    return [Line("  [magenta]- [/magenta]",
                 f"[magenta]dropped {escape(dropped.key)}[/magenta]{name}  [dim]id {escape(dropped.id)}, "
                 f"last loaded {escape(dropped.last_loaded)}[/dim]  {escape(dropped.outcome)}")]


def _blocked_lines(record: RecordPlan, block: BlockPlan) -> list[Line]:
    where = escape(record_place(record, block))
    return [Line("  [red]✗ [/red]",
                 f"[red]blocked {escape(label(record))}[/red]  [dim]{where}[/dim]  {escape(blocked_reason(record))}")]


def _blocked_row_lines(row: BlockedRow, block: BlockPlan) -> list[Line]:
    where = short_place(row.source, block)
    return [Line("  [red]✗ [/red]", f"[red]blocked {escape(key_label(row.key))}[/red]  [dim]{escape(where)}[/dim]  "
                                   f"{escape(row_reason(row))}")]


# the kinds of change to an existing record, each its own kind of row (its words for what was left out)
_CHANGE_WORDS = {"renumber": "to renumber", "retire": "to retire", "update": "to update",
                 "status move": "status moves", "kept platform edit": "kept platform edits"}
_ONE = {"status moves": "status move", "kept platform edits": "kept platform edit"}
# what the plan does with a record dropped from the source (its outcome's first word), each its own kind of row
_DROPPED_WORDS = {"retire": "dropped, retired", "released": "dropped, released", KEPT_DROPPED: "dropped, kept"}


def _change_word(record: RecordPlan) -> str:
    """What a change to an existing record does, as its row names it (a key of `_CHANGE_WORDS`)."""
    if record.renamed_from is not None:
        return "renumber"
    return "retire" if record.retiring else "update" if record.changes \
        else "status move" if record.status_path else "kept platform edit"


def _record_lines(sign: str, record: RecordPlan, block: BlockPlan) -> list[Line]:
    style = "green" if sign == "+" else "yellow"
    word = "create" if sign == "+" else _change_word(record)
    shown = label(record)
    if word == "renumber":  # the key it leaves, and the one it takes
        shown = f"{'/'.join(str(k) for k in record.renamed_from or ())} → {shown}"
    where = escape(record_place(record, block))
    lines = [Line(f"  [{style}]{sign} [/{style}]",
                  f"[{style}]{word} {escape(shown)}[/{style}]  [dim]{where}[/dim]")]
    for change in record.changes:
        if sign == "+" and change.old is None:
            lines.append(Line(FIELD, f"{escape(clean(change.field))}: {escape(value_text(change.new))}"))
        else:
            lines.append(Line(FIELD, f"{escape(clean(change.field))}: {escape(value_text(change.old))} → "
                                     f"{escape(value_text(change.new))}"))
    lines += [Line(FIELD, escape(note)) for note in notes(record)]
    return lines
