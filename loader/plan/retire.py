"""Retirement (`on_dropped: {set: ...}`, contract section 11): what a block sets on the records it
loaded and its source no longer names ("dropped from the source").

Each such record gets a **retire** change: an update of the fields `on_dropped` sets, reviewed,
counted and journaled like any update (so `loader revert` undoes it where the service can move
back). The values set are the sheet side of the three-way compare: live already holding them is
nothing to do; a retirement staff undid in the platform (live differs from W, and W is the retired
value) is a kept platform edit, not retired again each cycle. A status moves along legal steps that
never enter a published state (`published:` in the entity profile): a dropped ACTIVE arrangement
moves to INACTIVE; a DRAFT or READY one is left unpublished. A block whose source read no record,
or lost more than `MAX_DROPPED_SHARE` of the records it loaded, retires nothing and says why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from loader.findings import Finding
from loader.history.comparable import comparable
from loader.history.digests import RecordDigests
from loader.history.lines import HistoryLine, line_digest
from loader.history.store import History
from loader.live_records import updated_time
from loader.places import CellRef
from loader.plan.history_index import EntityIndex
from loader.plan.model import Action, BlockPlan, DroppedRecord, FieldChange, RecordPlan
from loader.profile import EntityProfile
from loader.record_fields import CUSTOM
from loader.source.block_records import EMPTY_SOURCE, EMPTY_SOURCE_FIX
from loader.source.equality import same

LABEL_PREFIX = f"{CUSTOM}."
MAX_DROPPED_SHARE = 0.2  # more of a block's records dropped at once than this: a source cut short, not retirements
MIN_GUARDED = 5  # at most this many dropped records are retired whatever the share
RETIRE = "retire"


def emptied(block: BlockPlan, given: Any, dropped: Sequence[DroppedRecord]) -> tuple[Finding, ...]:
    """An error when a query or feed read no record where the history records records the block
    loaded: a typo in `params:` or `records:` must not look like a catalogue withdrawn. The source's
    `allow_empty: true` says no records is right; a file's kind has no such option (its emptied
    sheet gives dropped records, as before). The source said the 0 records read already (a warning)."""
    rows_read: int = getattr(given, "rows_read", 1)
    if not dropped or getattr(given, "allow_empty", None) is not False or rows_read:
        return ()
    return (Finding("error", EMPTY_SOURCE,
                    f"block {block.name}: its source {block.source_file} read 0 records, where the history records "
                    f"{len(dropped)} this block loaded; {EMPTY_SOURCE_FIX}", getattr(given, "place", None)),)


def retirements(block: BlockPlan, given: Any, dropped: Sequence[DroppedRecord], index: EntityIndex,
                history: History, entity: EntityProfile) -> tuple[tuple[RecordPlan, ...], tuple[Finding, ...]]:
    """The retire changes of `block`'s dropped records under its `on_dropped:` (`given`: the block as
    read), and what the block says about them."""
    rule = getattr(given, "on_dropped", None)
    if rule is None or rule.release or not dropped:
        return (), ()
    place = getattr(rule, "place", None)
    if not block.records and not block.blocked_rows:
        return (), (Finding("warning", RETIRE, f"block {block.name} retires nothing: its source read no records",
                            place),)
    loaded = len(block.records) + len(dropped)
    if len(dropped) > max(MIN_GUARDED, MAX_DROPPED_SHARE * loaded):
        return (), (Finding("warning", RETIRE, f"block {block.name} retires nothing: {len(dropped)} of the {loaded} "
                            f"records it loaded are gone from its source (more than {MAX_DROPPED_SHARE:.0%}); check "
                            "the source, or retire them by hand", place),)
    if history.digester.is_personal(block.entity):
        return (), (Finding("warning", RETIRE, f"block {block.name} retires nothing: {block.entity} has personal "
                            "fields, whose records are retired by hand", place),)
    records, notes = [], []
    for record in dropped:
        live = index.by_id.get(record.id)
        token = index.line_of.get(record.id)
        line = index.line(token) if token is not None else None
        if live is None or line is None:
            continue
        planned, said = _retire(block, record, live, line, dict(rule.values), history, entity)
        records += [planned] if planned is not None else []
        notes += said
    return tuple(records), tuple(notes)


def _retire(block: BlockPlan, dropped: DroppedRecord, live: Mapping[str, Any], line: HistoryLine,
            values: Mapping[str, Any], history: History,
            entity: EntityProfile) -> tuple[RecordPlan | None, list[Finding]]:
    """The retire change of one dropped record (None when it has nothing to set), and what is said instead."""
    key = tuple(json.loads(line.key))
    shown = f"{block.entity} {'/'.join(str(k) for k in key)}"
    where = CellRef(block.source_file, block.sheet)
    sets = _Retirement(shown, where, entity)
    digests = history.digester.record(block.entity, key)
    for name, value in values.items():
        sets.add(name, value, _live_value(live, name), live, line, digests)
    if not sets.changes:
        return None, sets.notes
    fields = ", ".join(c.field for c in sets.changes)
    note = Finding("warning", RETIRE, f"{shown}: retire ({fields}): dropped from the source", where)
    record = RecordPlan(
        ref=f"{block.name}/{'/'.join(str(k) for k in key)}", block=block.name, entity=block.entity, key=key,
        action=Action.UPDATE if sets.payload else Action.UNCHANGED, payload=sets.payload, source=where,
        live_id=dropped.id, live_updated_time=_time(live), changes=tuple(sets.changes), status_path=sets.path,
        findings=(note,), history_line=line_digest(line), retiring=True)
    return record, sets.notes


@dataclass
class _Retirement:
    """What retiring one record (`shown`) sets, field by field: its payload, changes and status path,
    and what is said of the fields it leaves (a retirement undone by staff, a status it cannot take)."""

    shown: str
    where: CellRef
    entity: EntityProfile
    payload: dict[str, Any] = field(default_factory=dict)
    changes: list[FieldChange] = field(default_factory=list)
    path: tuple[str, ...] = ()
    notes: list[Finding] = field(default_factory=list)

    def add(self, name: str, value: Any, current: Any, live: Mapping[str, Any], line: HistoryLine,
            digests: RecordDigests) -> None:
        """Set field `name` to `value` (live holds `current`) where it differs and was not undone."""
        entity, status = self.entity, self.entity.status
        if same(comparable(name, value, entity), comparable(name, current, entity)):
            return
        if _undone(line, name, value, current, digests, entity):
            self._say(f"{name}: kept: set back to {current!r} in the platform after it was retired")
            return
        if status is not None and name == status.field:
            steps = status.retiring_path(str(current), str(value))
            if steps is None:
                what = "left unpublished" if str(current) not in status.published else f"cannot move from {current}"
                self._say(f"{name}: {what} (dropped from the source; on_dropped sets {value!r})")
                return
            self.path = steps
        elif name.startswith(LABEL_PREFIX):
            labels = dict(self.payload.get(CUSTOM) or live.get(CUSTOM) or {})
            labels[name[len(LABEL_PREFIX):]] = value
            self.payload[CUSTOM] = labels
        else:
            self.payload[name] = value
        self.changes.append(FieldChange(name, current, value))

    def _say(self, text: str) -> None:
        self.notes.append(Finding("warning", RETIRE, f"{self.shown}: {text}", self.where))


def _live_value(live: Mapping[str, Any], name: str) -> Any:
    if name.startswith(LABEL_PREFIX):
        labels = live.get(CUSTOM)
        return labels.get(name[len(LABEL_PREFIX):]) if isinstance(labels, Mapping) else None
    return live.get(name)


def _undone(line: HistoryLine, name: str, value: Any, current: Any, digests: RecordDigests,
            entity: EntityProfile) -> bool:
    """Whether the loader set `value` before and the platform changed it since (a kept edit)."""
    mark = line.fields.get(name)
    if mark is None or not isinstance(mark.written, str):
        return False
    digest = digests.value(name, comparable(name, value, entity))
    return mark.written == digest and digests.value(name, comparable(name, current, entity)) != digest


def _time(live: Mapping[str, Any]) -> int | None:
    time = updated_time(live)
    return time if isinstance(time, int) else None


def released(block: BlockPlan, dropped: Sequence[DroppedRecord], given: Any) -> tuple[DroppedRecord, ...]:
    """The dropped records a block stops managing (`on_dropped: release`): listed as released, and
    forgotten by the history once the plan is applied (a record that comes back is then compared
    two-way)."""
    rule = getattr(given, "on_dropped", None)
    return tuple(dropped) if rule is not None and rule.release else ()


def released_findings(block: BlockPlan, records: Sequence[DroppedRecord]) -> tuple[Finding, ...]:
    """One warning a released record, listed once: after the apply the history no longer knows it."""
    where = CellRef(block.source_file, block.sheet)
    return tuple(Finding("warning", "released", f"{block.entity} {'/'.join(str(k) for k in record.key)} (id "
                         f"{record.id}): released: no longer managed here", where) for record in records)


def restored(block: BlockPlan, given: Any, index: EntityIndex, history: History,
             entity: EntityProfile) -> BlockPlan:
    """`block` with each retired record that is back in its source given back what `on_dropped` set
    and the sheet does not manage: its value before the retirement, from the journal (the fields the
    sheet manages are planned from the sheet, as for any record)."""
    rule = getattr(given, "on_dropped", None)
    if rule is None or rule.release or history.digester.is_personal(block.entity):
        return block
    managed = {r.field for r in block.field_rules} | set(block.key_fields)
    unmanaged = {name: value for name, value in rule.values if name not in managed}
    wanted: dict[str, list[str]] = {}  # record ref -> the fields to give back
    for record in block.records:
        names = _retired_fields(record, unmanaged, index, history, entity)
        if names:
            wanted[record.ref] = names
    if not wanted:
        return block
    befores = _values_before(history, block.entity, {r.ref: r for r in block.records}, wanted, unmanaged)
    records = tuple(_given_back(r, befores.get(r.ref, {}), index) if r.ref in befores else r for r in block.records)
    return replace(block, records=records)


def _retired_fields(record: RecordPlan, unmanaged: Mapping[str, Any], index: EntityIndex, history: History,
                    entity: EntityProfile) -> list[str]:
    """The fields of `unmanaged` (those `on_dropped` sets and the sheet does not) that a record back in
    the source still holds as the loader's retirement wrote them."""
    if record.retiring or record.blocked or not record.live_id or record.live_id not in index.line_of:
        return []
    line = index.line(index.line_of[record.live_id])
    live = index.by_id.get(record.live_id)
    if line is None or live is None:
        return []
    digests = history.digester.record(record.entity, record.key)
    return [name for name, value in unmanaged.items()
            if same(_live_value(live, name), value) and _wrote(line, name, value, digests, entity)]


def _wrote(line: HistoryLine, name: str, value: Any, digests: RecordDigests, entity: EntityProfile) -> bool:
    mark = line.fields.get(name)
    return mark is not None and mark.written == digests.value(name, comparable(name, value, entity))


def _values_before(history: History, entity: str, records: Mapping[str, RecordPlan],
                   wanted: Mapping[str, Sequence[str]], values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per record ref, per field, the value before the newest journaled write of the retired value."""
    tokens = {history.digester.key_token(entity, records[ref].key): ref for ref in wanted}
    found: dict[str, dict[str, Any]] = {}
    for journal in reversed(history.journals()):
        for entry in reversed(journal.entries):
            ref = tokens.get(entry.key) if entry.entity == entity and entry.kind == "update" else None
            if ref is None:
                continue
            for name in wanted[ref]:
                field = entry.fields.get(name)
                if field is not None and field.has_after and same(field.after, values[name]):
                    found.setdefault(ref, {}).setdefault(name, field.before)
    return found


def _given_back(record: RecordPlan, befores: Mapping[str, Any], index: EntityIndex) -> RecordPlan:
    live = index.by_id.get(record.live_id) if record.live_id else None
    payload = dict(record.payload)
    changes = list(record.changes)
    for name, before in sorted(befores.items()):
        current = _live_value(live or {}, name)
        if name.startswith(LABEL_PREFIX):
            labels = dict(payload.get(CUSTOM) or (live or {}).get(CUSTOM) or {})
            if before is None:
                labels.pop(name[len(LABEL_PREFIX):], None)
            else:
                labels[name[len(LABEL_PREFIX):]] = before
            payload[CUSTOM] = labels
        else:
            payload[name] = before
        changes.append(FieldChange(name, current, before))
    note = Finding("warning", RETIRE, f"{', '.join(sorted(befores))}: back in the source: given back its value "
                   "before the retirement", record.source)
    return replace(record, action=Action.UPDATE if record.action is Action.UNCHANGED else record.action,
                   payload=payload, changes=tuple(changes), findings=(*record.findings, note))
