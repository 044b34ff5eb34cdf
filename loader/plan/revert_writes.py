"""What one apply did to each record, read from its journal: the input of `loader revert`.

A journal has one entry per write as it happened (a create, an update, each status step, an
adoption, a lost answer). Revert needs them per record: whether the apply created it (or adopted a
create whose answer was lost), and per field the value before its first write and W, the digest of
what its last write left. Pure: a journal in, values out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from loader.history.digests import Key, Written
from loader.history.errors import HistoryError
from loader.history.journal import Journal, JournalEntry
from loader.history.lines import Owner

CREATED = frozenset({"create", "adopt"})
NO_OWNER = Owner("", "")


@dataclass(frozen=True)
class FieldUndo:
    """One field an apply wrote: the value before its first write, W after its last."""

    field: str
    before: Any
    written: Written


@dataclass(frozen=True)
class RecordWrites:
    """Everything one apply wrote to one record. `key` and `live_id` are the journal's tokens."""

    entity: str
    key: str
    live_id: str | None
    owner: Owner
    created: bool = False
    lost: bool = False
    fields: Mapping[str, FieldUndo] = field(default_factory=dict)
    formerly: str | None = None  # the key token it had before the apply renumbered it

    @property
    def personal(self) -> bool:
        """Whether its tokens are keyed digests (an entity with personal fields): no value before kept.
        A plain key token is the key's JSON text, a list; a keyed one never starts with '['."""
        return not self.key.startswith("[")

    def key_values(self) -> Key:
        """The record's key values (only for an entity without personal fields)."""
        return tuple(json.loads(self.key))


def records_written(journal: Journal) -> list[RecordWrites]:
    """The records `journal`'s apply wrote, sorted by entity and key token ("confirm" entries, which
    wrote nothing, are left out)."""
    grouped: dict[tuple[str, str], list[JournalEntry]] = {}
    for entry in journal.entries:
        if entry.kind != "confirm":
            grouped.setdefault((entry.entity, entry.key), []).append(entry)
    return [_record(entity, key, entries) for (entity, key), entries in sorted(grouped.items())]


def _record(entity: str, key: str, entries: Sequence[JournalEntry]) -> RecordWrites:
    fields: dict[str, FieldUndo] = {}
    owner = NO_OWNER
    for entry in entries:
        if entry.kind != "update":
            continue
        for name, mark in entry.fields.items():
            first = fields.get(name)
            fields[name] = FieldUndo(name, mark.before if first is None else first.before, mark.written)
            owner = mark.owner
    if owner == NO_OWNER:
        owner = next((m.owner for e in entries for m in e.fields.values()), NO_OWNER)
    live_id = next((e.live_id for e in reversed(entries) if e.live_id), None)
    return RecordWrites(entity, key, live_id, owner, created=any(e.kind in CREATED for e in entries),
                        lost=any(e.kind == "lost" for e in entries), fields=dict(sorted(fields.items())),
                        formerly=next((e.formerly for e in entries if e.formerly is not None), None))


def pick_journal(journals: Sequence[Journal], apply_id: str | None, where: str, *, last: str | None = None) -> Journal:
    """The journal of apply `apply_id`, else of the last apply that wrote something: `last` (the
    head's, as two applies within a second need not sort in order), else the last in `journals`."""
    wanted = apply_id or last
    if wanted is not None:
        for journal in journals:
            if journal.info.apply_id == wanted:
                return journal
        if apply_id is not None:
            known = ", ".join(j.info.apply_id for j in journals[-5:]) or "none"
            raise HistoryError(f"no apply {apply_id!r} in the history", where=where,
                               hint=f"the last applies are: {known}")
    wrote = [j for j in journals if j.wrote]
    if not wrote:
        raise HistoryError("the history holds no apply that wrote anything: there is nothing to revert",
                           where=where, hint="revert works on applies made with the history on")
    return wrote[-1]
