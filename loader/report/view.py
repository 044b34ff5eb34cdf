"""What every plan report shows, computed once: per-block counts, record rows, places, safe text.

Reports are organised by record (contract section 7): the summary, then errors and warnings with
their places, then per block the changes to existing records (one row per record, only
`field: old → new`), the records dropped from the source, and only then its creates (one row per
record, a column per field); live records no mapping of this project loaded ("not managed here")
are counted. `loader.report.rules` groups a block's changes by the mapping line that made them.
Renderers (terminal, Markdown, HTML) format these; none of them decides what a plan means.

`clean` makes any text safe to print: control characters (a carriage return, an escape sequence),
line breaks and bidirectional overrides are shown as visible escapes, never passed through.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any

from loader.console import clean as clean
from loader.places import PLACE_SEPARATOR, CellRef, Place
from loader.plan.masking import HIDDEN
from loader.plan.model import Action, BlockedRow, BlockPlan, FieldChange, FieldOutcome, Plan, RecordPlan
from loader.report.references import target_text
from loader.words import plural

CUT_MARK = "…✂"  # ends a value cut short for a report (plan.json has it whole)

def cut(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, ending in the cut marker when cut."""
    return text if len(text) <= limit else text[: max(limit - len(CUT_MARK), 1)] + CUT_MARK


@dataclass(frozen=True)
class BlockCounts:
    create: int
    update: int
    unchanged: int
    not_in_source: int  # "not managed here": live records no mapping of this project loaded
    blocked: int
    warnings: int
    errors: int
    dropped: int = 0  # dropped from the source: loaded by this block before, no longer in its sheet
    kept: int = 0  # kept platform edits (fields)
    conflicts: int = 0  # conflicts, held (fields)
    renumber: int = 0  # renumbers (`renamed:`): updates of a record's key, counted apart from `update`

    @property
    def changed(self) -> int:
        return self.renumber + self.create + self.update


def is_blocked(record: RecordPlan) -> bool:
    return record.blocked or (bool(record.findings) and bool(record.errors))


def counts(block: BlockPlan) -> BlockCounts:
    """Counts of one block; a blocked record (errors of its own or of a dependency) counts as blocked only."""
    by_action = dict.fromkeys(Action, 0)
    renumbers = 0
    warnings = sum(f.severity == "warning" for f in block.findings)
    errors = sum(f.severity == "error" for f in block.findings)
    for r in block.records:  # one pass: a block can hold 100,000 records
        if r.findings:
            record_errors = len(r.errors)
            warnings += len(r.findings) - record_errors
            errors += record_errors
            if record_errors:
                continue
        if not r.blocked:
            by_action[r.action] += 1
            renumbers += r.renamed_from is not None and r.action is Action.UPDATE
    return BlockCounts(
        create=by_action[Action.CREATE],
        update=by_action[Action.UPDATE] - renumbers,
        unchanged=by_action[Action.UNCHANGED],
        not_in_source=block.not_in_source,
        blocked=block.blocked,
        warnings=warnings,
        errors=errors,
        dropped=len(block.dropped),
        kept=sum(len(r.kept) for r in block.records),
        conflicts=sum(len(r.conflicts) for r in block.records),
        renumber=renumbers,
    )


def totals(plan: Plan) -> BlockCounts:
    each = [counts(b) for b in plan.blocks]
    return BlockCounts(
        create=sum(c.create for c in each),
        update=sum(c.update for c in each),
        unchanged=sum(c.unchanged for c in each),
        not_in_source=sum(c.not_in_source for c in each),
        blocked=sum(c.blocked for c in each),
        warnings=sum(c.warnings for c in each) + sum(f.severity == "warning" for f in plan.findings),
        errors=sum(c.errors for c in each) + sum(f.severity == "error" for f in plan.findings),
        dropped=sum(c.dropped for c in each),
        kept=sum(c.kept for c in each),
        conflicts=sum(c.conflicts for c in each),
        renumber=sum(c.renumber for c in each),
    )


COUNT_NAMES = ("renumber", "create", "update", "unchanged", "dropped", "not managed here", "kept edits", "conflicts",
               "blocked", "warnings", "errors")
HELD_COLUMNS = frozenset(map(COUNT_NAMES.index, ("kept edits", "conflicts")))  # fields held back, not records


def count_values(c: BlockCounts) -> tuple[int, ...]:
    """A block's counts in the order of COUNT_NAMES."""
    return (c.renumber, c.create, c.update, c.unchanged, c.dropped, c.not_in_source, c.kept, c.conflicts, c.blocked,
            c.warnings, c.errors)


def shown_columns(rows: list[tuple[int, ...]]) -> list[int]:
    """The count columns (indexes of COUNT_NAMES) a table of `rows` shows: create, update and unchanged
    always, each other (renumbers first) where some row has one, so a table is as narrow as its plan allows."""
    return [n for n in range(len(COUNT_NAMES)) if 1 <= n <= 3 or any(row[n] for row in rows)]


def summary_words(t: BlockCounts) -> str:
    history = (f"{plural(t.kept, 'kept platform edit')}, {plural(t.conflicts, 'conflict')}, "
               if t.kept or t.conflicts else "")
    renumbers = f"{t.renumber} to renumber, " if t.renumber else ""
    return (f"{renumbers}{t.create} to create, {t.update} to update, {t.unchanged} unchanged, {t.dropped} dropped from "
            f"the source, {t.not_in_source} not managed here, {history}{t.blocked} blocked, "
            f"{plural(t.warnings, 'warning')}, {plural(t.errors, 'error')}")


# ---- records of a block, as a reviewer reads them ------------------------------------------


def creates(block: BlockPlan) -> list[RecordPlan]:
    return [r for r in block.records if r.action is Action.CREATE and not is_blocked(r)]


def updates(block: BlockPlan) -> list[RecordPlan]:
    """Changes to existing records, renumbers first: updates, unchanged records that only move along a status path,
    and records with kept platform edits or conflicts not shown before."""
    found = [r for r in block.records if r.action is not Action.CREATE and (r.has_changes or _news(r))
             and not is_blocked(r)]
    return sorted(found, key=lambda r: r.renamed_from is None)  # renumbers first, each kind in plan order


def updates_words(listed: Sequence[RecordPlan]) -> str:
    """What a table of `updates` lists, counted: `4 records, 7 fields`, and which of those records are
    no plain update (`1 renumber, 2 with kept platform edits or conflicts only`), so the heading
    counts the rows it heads."""
    words = f"{plural(len(listed), 'record')}, {plural(sum(len(r.changes) for r in listed), 'field')}"
    renumbers = sum(r.renamed_from is not None for r in listed)
    moves = sum(not r.changes and bool(r.status_path) for r in listed)
    held = sum(not r.changes and not r.status_path for r in listed)
    parts = [plural(renumbers, "renumber"), f"{plural(moves, 'status move')} only",
             f"{held:,} with kept platform edits or conflicts only"]
    shown = [part for part, n in zip(parts, (renumbers, moves, held), strict=True) if n]
    return words + (f" ({', '.join(shown)})" if shown else "")


def _news(record: RecordPlan) -> bool:
    return any(not o.seen for o in (*record.kept, *record.conflicts)) if record.kept or record.conflicts else False


def outcome_text(kind: str, outcome: FieldOutcome) -> str:
    """A kept platform edit or a conflict, as one line: the field, its values, who changed it and when."""
    last = "unknown" if outcome.last_loaded is None and not outcome.pii else value_text(outcome.last_loaded)
    shown = outcome.editor_email or outcome.editor or outcome.changed_by
    who = clean(shown) if shown else "someone"
    when = _when(outcome.changed_at)
    values = (f"live {value_text(outcome.live)}, sheet {value_text(outcome.sheet)}, last loaded {last}"
              if kind == "conflict" else f"live {value_text(outcome.live)} kept (sheet {value_text(outcome.sheet)})")
    what = "conflict, held" if kind == "conflict" else "kept platform edit"
    return f"{what}: {clean(outcome.field)}: {values}; changed in the platform by {who}{when}"


def _when(epoch_ms: int | None) -> str:
    if epoch_ms is None:
        return ""
    return " at " + datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="seconds")


def history_notes(record: RecordPlan) -> list[str]:
    """The record's kept edits and conflicts not shown before, in full; those shown before, counted."""
    out = [outcome_text("conflict", o) for o in record.conflicts if not o.seen]
    out += [outcome_text("kept", o) for o in record.kept if not o.seen]
    seen = sum(o.seen for o in (*record.kept, *record.conflicts))
    if seen:
        out.append(f"{plural(seen, 'kept platform edit or conflict', 'kept platform edits or conflicts')} shown before")
    return out


def conflicts_of(plan: Plan) -> tuple[list[tuple[str, str]], int]:
    """(record label, line) of every conflict not shown before, and how many were shown before."""
    found = [(f"{b.name} › {label(r)}", outcome_text("conflict", o))
             for b in plan.blocks for r in b.records for o in r.conflicts if not o.seen]
    seen = sum(o.seen for r in plan.records() for o in r.conflicts)
    return found, seen


def dropped_text(last_loaded: str | None) -> str:
    return clean(last_loaded) if last_loaded else "unknown"


@dataclass(frozen=True)
class DroppedRow:
    """A record dropped from the source as every report lists it: key, id, name, when last loaded, and
    what the plan does with it (`on_dropped:`): retired (the retire change's fields), released, or kept."""

    key: str
    id: str
    name: str
    last_loaded: str
    outcome: str


KEPT_DROPPED = "nothing written"  # `on_dropped: keep`, a record left unpublished, or nothing to set


def dropped_rows(block: BlockPlan, *, every: bool = False) -> list[DroppedRow]:
    """The block's dropped records not shown before (`every`: all of them), made safe to print, in order."""
    retiring = {r.live_id: r for r in block.records if r.retiring and not is_blocked(r)}
    released = {d.id for d in block.released}
    rows = []
    for dropped in block.dropped:
        if dropped.seen and not every:
            continue
        record = retiring.get(dropped.id)
        if record is not None:
            outcome = "retire: " + ", ".join(_retire_step(c, record) for c in record.changes)
        else:
            outcome = "released: no longer managed here" if dropped.id in released else KEPT_DROPPED
        rows.append(DroppedRow(key_label(dropped.key), clean(dropped.id), clean(dropped.name or ""),
                               dropped_text(dropped.last_loaded), outcome))
    return rows


def _retire_step(change: FieldChange, record: RecordPlan) -> str:
    if change.field == "status" and record.status_path:
        return f"status: {clean(str(change.old))} → {status_text(record)}"
    return f"{clean(change.field)}: {value_text(change.old)} → {value_text(change.new)}"


def blocked_records(block: BlockPlan) -> list[RecordPlan]:
    return [r for r in block.records if is_blocked(r)]


def create_columns(records: list[RecordPlan]) -> list[str]:
    """The fields the creates set, in the order they first appear."""
    seen: dict[str, None] = {}
    for r in records:
        for c in r.changes:
            seen.setdefault(c.field, None)
    return list(seen)


def create_values(record: RecordPlan) -> dict[str, FieldChange]:
    return {c.field: c for c in record.changes}


def changed(record: RecordPlan) -> list[FieldChange]:
    return list(record.changes)


def changed_records(block: BlockPlan) -> list[RecordPlan]:
    """Records a reviewer must read: creates, updates, and any record with findings."""
    return [r for r in block.records if r.has_changes or r.findings or r.kept or r.conflicts]


def label(record: RecordPlan) -> str:
    """The record as a reviewer names it: its key values (made safe to print)."""
    return key_label(record.key)


def key_label(key: tuple[Any, ...] | list[Any] | None) -> str:
    if key is None:
        return "(key unreadable)"
    return clean("/".join(str(k) if not isinstance(k, list) else "/".join(map(str, k)) for k in key))


def value_text(value: Any) -> str:
    """A value as JSON text (strings quoted), a masked PII value as ‹hidden›, a reference as its target
    (`program SCI01`, `id …` where no key is known); always one safe line."""
    if type(value) is str:  # the common case, first: a report can hold a million values
        return value if value == HIDDEN else clean(encode_basestring(value))
    if value is None:
        return "null"
    named = target_text(value)  # a reference, by its target's key (`loader.report.references`)
    if named is not None:
        return clean(named)
    return clean(json.dumps(value, ensure_ascii=False, default=str))


def cell_text(value: Any) -> str:
    """A value for a table cell of creates: strings unquoted, everything else as JSON; one safe line."""
    if isinstance(value, str):
        return clean(value)
    return value_text(value)


def status_text(record: RecordPlan) -> str:
    """The status updates in order: `READY → ACTIVE`, or `after the create: READY → ACTIVE`."""
    steps = " → ".join(clean(s) for s in record.status_path)
    return f"after the create: {steps}" if record.action is Action.CREATE else steps


def notes(record: RecordPlan) -> list[str]:
    """What the record's row says besides its fields: the status path, what it waits for, its warnings."""
    out = []
    if record.status_path:
        out.append(f"status path: {status_text(record)}")
    if record.kept or record.conflicts:
        out += history_notes(record)
    for f in record.warnings:
        out.append(f"warning: {clean(f.message)}")
    return out


def blocked_reason(record: RecordPlan) -> str:
    if record.errors:
        return "; ".join(clean(f.message) for f in record.errors)
    waits = ", ".join(clean(d) for d in record.depends_on) or "a record with errors"
    return f"depends on a record with errors ({waits})"


def row_reason(row: BlockedRow) -> str:
    return "; ".join(clean(f.message) for f in row.errors) or "left out by errors"


# ---- places ----------------------------------------------------------------------------------


def relative(path: str) -> str:
    """A path relative to the working directory where it lies below it, else as given."""
    if not os.path.isabs(path):
        return path
    try:
        return Path(path).relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path


def block_source(block: BlockPlan) -> str:
    """The block's source, once: `file › sheet`, the file relative to the working directory."""
    return place(CellRef(block.source_file, block.sheet))


def short_place(where: Place | None, block: BlockPlan) -> str:
    """A place inside the block's sheet without the file and sheet (`row 7`, `D17`); others kept whole."""
    if where is None:
        return ""
    if (isinstance(where, CellRef) and where.sheet == block.sheet
            and relative(where.file) == relative(block.source_file)):
        inside = where.cell or (f"row {where.row}" if where.row is not None else "")
        if where.record is not None:  # a record of a source that is not a sheet: its key, and the column
            inside = PLACE_SEPARATOR.join(part for part in (where.record, where.cell) if part)
        if inside:
            return clean(inside + (f" ({where.repeat})" if where.repeat else ""))
    return place(where)


def place(where: Place | None) -> str:
    """A place as text, its file relative to the working directory where it lies below it."""
    if where is None:
        return ""
    return clean(str(replace(where, file=relative(where.file))))


def record_place(record: RecordPlan, block: BlockPlan) -> str:
    """`row 7`, and the failing cells where the record has errors: `row 7 (D7)`."""
    by_row = record.row is not None and record.source.record is None  # a record of a query or feed: its key
    row = f"row {record.row}" if by_row else short_place(record.source, block)
    if not record.findings:
        return row
    cells = [short_place(f.where, block) for f in record.errors if f.where]
    cells = [c for c in dict.fromkeys(cells) if c and c != row]
    return f"{row} ({', '.join(cells)})" if cells else row


def row_cell(record: RecordPlan, block: BlockPlan) -> str:
    """`record_place` for a column headed "row": `7`, `7 (D7)`."""
    return record_place(record, block).removeprefix("row ")
