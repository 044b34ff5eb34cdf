"""What `loader history` shows: the applies a history recorded, and one record's loads field by field.

    applies(history)                          newest first: id, time, who, plan digest, counts
    record_loads(history, "courses", ("C1",)) every journal entry of that record, oldest first

Nothing here prints a personal value: for an entity with personal fields a load says only whether
a field changed (the journal keeps digests of them, never values). For other entities a field's
value before is in the journal, and its value after is known where a later load's value before
has the digest W this load recorded; otherwise only its digest is kept, and that is said.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loader.history.digests import Digester, Key
from loader.history.journal import Journal, JournalEntry
from loader.history.store import History

BASELINE = "baseline"  # the count a baseline's journal carries (`loader history baseline`)


@dataclass(frozen=True)
class ApplyRow:
    """One apply (or baseline) as the history recorded it."""

    apply_id: str
    time: str
    by: str | None
    plan_digest: str | None
    counts: Mapping[str, int]
    kind: str  # "apply" or "baseline"
    finished: bool  # False: the apply was interrupted; its journal was folded in afterwards

    def as_json(self) -> dict[str, Any]:
        return {"id": self.apply_id, "time": self.time, "by": self.by, "plan_digest": self.plan_digest,
                "kind": self.kind, "finished": self.finished, "counts": dict(self.counts)}


def applies(history: History) -> list[ApplyRow]:
    """The applies and baselines of `history`, newest first."""
    rows = [_row(journal) for journal in history.journals()]
    return sorted(rows, key=lambda row: (row.time, row.apply_id), reverse=True)


def _row(journal: Journal) -> ApplyRow:
    counts = journal.counts
    if counts is None:  # interrupted: count its entries
        counts = {}
        for entry in journal.entries:
            counts[entry.kind] = counts.get(entry.kind, 0) + 1
    kind = BASELINE if BASELINE in counts else "apply"
    info = journal.info
    return ApplyRow(info.apply_id, info.time, info.by, info.plan_digest, dict(sorted(counts.items())), kind,
                    journal.counts is not None)


@dataclass(frozen=True)
class FieldLoad:
    """One field of one load. `before`/`after` are shown only for entities without personal fields
    (`known_after` False: the value after is kept only as a digest); `changed` always."""

    field: str
    owner: str  # "mappings/courses.yaml › courses"
    changed: bool
    before: Any = None
    after: Any = None
    known_after: bool = False

    def as_json(self, personal: bool) -> dict[str, Any]:
        data: dict[str, Any] = {"field": self.field, "owner": self.owner, "changed": self.changed}
        if not personal:
            data["before"] = self.before
            data["after"] = self.after if self.known_after else None
            data["after_known"] = self.known_after
        return data


@dataclass(frozen=True)
class RecordLoad:
    """One journal entry of a record: which apply, what kind (create, update, adopt, lost, confirm)."""

    apply: ApplyRow
    kind: str
    fields: tuple[FieldLoad, ...]


@dataclass(frozen=True)
class RecordLoads:
    entity: str
    personal: bool  # the entity's keys, ids and values are keyed digests in the history
    in_snapshot: bool  # the snapshot holds a line for the record
    loads: tuple[RecordLoad, ...]


def record_loads(history: History, entity: str, key: Key) -> RecordLoads:
    """Every load of the record `key` of `entity` the journals hold, oldest first. The record is
    looked up by its plain key and, where the history has a key, by its keyed digest (an entity with
    personal fields), so the caller need not know which the entity is."""
    for digester in _digesters(history, entity):
        token = digester.key_token(entity, key)
        matched = [(journal, entry) for journal in history.journals() for entry in journal.entries
                   if entry.entity == entity and entry.key == token]
        in_snapshot = history.snapshot.get(entity, token) is not None
        if matched or in_snapshot:
            loads = tuple(_loads(matched, digester, entity, key))
            return RecordLoads(entity, digester.is_personal(entity), in_snapshot, loads)
    return RecordLoads(entity, False, False, ())


def _digesters(history: History, entity: str) -> Iterator[Digester]:
    yield Digester(frozenset(), None)
    if history.digester.data_key is not None:
        yield Digester(frozenset({entity}), history.digester.data_key)


def _loads(matched: Sequence[tuple[Journal, JournalEntry]], digester: Digester, entity: str,
           key: Key) -> Iterator[RecordLoad]:
    personal = digester.is_personal(entity)
    for index, (journal, entry) in enumerate(matched):
        later = [e for _, e in matched[index + 1:]]
        fields = tuple(_field_load(name, entry, later, digester, entity, key, personal)
                       for name in sorted(entry.fields))
        yield RecordLoad(_row(journal), entry.kind, fields)


def _field_load(name: str, entry: JournalEntry, later: Iterable[JournalEntry], digester: Digester,
                entity: str, key: Key, personal: bool) -> FieldLoad:
    mark = entry.fields[name]
    owner = f"{mark.owner.file} › {mark.owner.block}" if mark.owner.file else mark.owner.block
    as_set = not isinstance(mark.written, str)
    confirm = entry.kind == "confirm"  # nothing written: live found equal to the sheet, W := live
    if personal:  # `before` is a digest made as W is
        before = mark.before if isinstance(mark.before, str) or mark.before is None else frozenset(mark.before)
        return FieldLoad(name, owner, not confirm and (entry.kind in ("create", "adopt") or before != mark.written))
    before_w = digester.written(entity, key, name, mark.before, as_set=as_set)
    if confirm:  # the value is known where the confirmation kept it (a baseline does)
        known = before_w == mark.written
        return FieldLoad(name, owner, False, mark.before if known else None, mark.before if known else None, known)
    changed = entry.kind in ("create", "adopt") or before_w != mark.written
    for following in later:
        if name in following.fields:
            value = following.fields[name].before
            if digester.written(entity, key, name, value, as_set=as_set) == mark.written:
                return FieldLoad(name, owner, changed, mark.before, value, True)
            break
    return FieldLoad(name, owner, changed, mark.before)
