"""What `loader history` shows: the applies a history recorded, and one record's loads field by field.

    applies(history)                          newest first: id, time, who, plan digest, counts
    record_loads(history, "courses", ("C1",)) every journal entry of that record, oldest first

Nothing here prints a personal value: for an entity with personal fields a load says only whether
a field changed (the journal keeps digests of them, never values). For other entities a field's
value before is in the journal, and its value after is known where a later load's value before
has the digest W this load recorded; otherwise only its digest is kept, and that is said.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from loader.history.digests import Digester, Key, Written, expand_id
from loader.history.files import damaged
from loader.history.journal import Journal, JournalEntry
from loader.history.journal_reading import UNREADABLE, entry_from, read_journal_summary, rows_naming
from loader.history.lines import CUSTOM
from loader.history.store import History, finished_journals

LABEL_PREFIX = f"{CUSTOM}."

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
    """The applies and baselines of `history`, newest first. Only a journal's first and last lines
    are read (its header and counts), unless it was interrupted and has no counts."""
    paths = finished_journals(history.folder)
    rows = [_summary(path) for path in paths]
    return sorted(rows, key=lambda row: (row.time, row.apply_id), reverse=True)


def _summary(path: Path) -> ApplyRow:
    return _row(read_journal_summary(path))


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
    written: Written = ""  # W this load recorded
    live_now: bool = False  # the value after was read live (still what the loader left)

    def as_json(self, personal: bool) -> dict[str, Any]:
        data: dict[str, Any] = {"field": self.field, "owner": self.owner, "changed": self.changed}
        if not personal:
            data["before"] = self.before
            data["after"] = self.after if self.known_after else None
            data["after_known"] = self.known_after
            data["after_is_live"] = self.live_now
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
    live_id: str | None = None  # the record's live id, for an entity without personal fields
    key: Key = ()

    @property
    def unknown_after(self) -> bool:
        """Whether a value after is kept only as a digest (`with_live` may find it live)."""
        return not self.personal and any(not f.known_after for load in self.loads for f in load.fields)


def with_live(loads: RecordLoads, live: Mapping[str, Any], comparable: Callable[[str, Any], Any]) -> RecordLoads:
    """`loads` with each field's value after taken from `live` (the record as the service holds it
    now) where the digest of the live value is the W that load recorded and no later load wrote the
    field: the value is still what the loader left. `comparable(field, value)` gives the form W
    digests (a reference by its id)."""
    if loads.personal:
        return loads
    digester, seen, out = Digester(), set(), []
    for load in reversed(loads.loads):
        fields = []
        for f in load.fields:
            if not f.known_after and f.field not in seen:
                raw = _live_value(live, f.field)
                as_set = isinstance(f.written, frozenset)
                for value in (comparable(f.field, raw), raw):  # the form W digests; as the service gives it
                    if digester.written(loads.entity, loads.key, f.field, value, as_set=as_set) == f.written:
                        f = replace(f, after=value, known_after=True, live_now=True)
                        break
            seen.add(f.field)
            fields.append(f)
        out.append(replace(load, fields=tuple(fields)))
    return replace(loads, loads=tuple(reversed(out)))


def _live_value(live: Mapping[str, Any], name: str) -> Any:
    if name.startswith(LABEL_PREFIX):
        labels = live.get(CUSTOM)
        return labels.get(name[len(LABEL_PREFIX):]) if isinstance(labels, Mapping) else None
    return live.get(name)


def record_loads(history: History, entity: str, key: Key) -> RecordLoads:
    """Every load of the record `key` of `entity` the journals hold, oldest first. The record is
    looked up by its plain key and, where the history has a key, by its keyed digest (an entity with
    personal fields), so the caller need not know which the entity is. Only the journal lines that
    name the record are parsed."""
    paths = finished_journals(history.folder)
    for digester in _digesters(history, entity):
        token = digester.key_token(entity, key)
        matched = [pair for path in paths for pair in _entries_naming(path, entity, token)]
        in_snapshot = history.snapshot.get(entity, token) is not None
        if matched or in_snapshot:
            loads = tuple(_loads(matched, digester, entity, key))
            personal = digester.is_personal(entity)
            line = history.snapshot.get(entity, token)
            live_id = expand_id(line.live_id) if line is not None and line.live_id and not personal else None
            return RecordLoads(entity, personal, in_snapshot, loads, live_id, tuple(key))
    return RecordLoads(entity, False, False, ())


def _entries_naming(path: Path, entity: str, token: str) -> Iterator[tuple[Journal, JournalEntry]]:
    """The entries of the journal in `path` for the record `token` of `entity`, each with the journal
    (its header and counts; no entries)."""
    journal = None
    for row in rows_naming(path, {token}):
        try:
            item = json.loads(row)
        except ValueError:
            continue
        if isinstance(item, dict) and item.get("entity") == entity and item.get("key") == token:
            try:
                entry = entry_from(item)
            except UNREADABLE as error:
                raise damaged(f"an entry of the record cannot be read ({type(error).__name__}: {error}; "
                              "edited by hand?)", path) from None
            journal = journal or read_journal_summary(path)
            yield journal, entry


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
        changed = not confirm and (entry.kind in ("create", "adopt") or before != mark.written)
        return FieldLoad(name, owner, changed, written=mark.written)
    before_w = digester.written(entity, key, name, mark.before, as_set=as_set)
    if confirm:  # the value is known where the confirmation kept it (a baseline does)
        known = before_w == mark.written
        shown = mark.before if known else None
        return FieldLoad(name, owner, False, shown, shown, known, mark.written)
    changed = entry.kind in ("create", "adopt") or before_w != mark.written
    for following in later:
        if name in following.fields:
            value = following.fields[name].before
            if digester.written(entity, key, name, value, as_set=as_set) == mark.written:
                return FieldLoad(name, owner, changed, mark.before, value, True, mark.written)
            break
    return FieldLoad(name, owner, changed, mark.before, written=mark.written)
