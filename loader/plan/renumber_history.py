"""A renumbered record's W under its new key.

Every W is a digest bound to its record's key (`loader.history.digests`), so a record whose key
moves needs its W made again under the new key, or the next plan would take every field for a
platform edit. A renumber is compared against the line of its old key with the old key's digests
(`loader.plan.history_pass`); then each field it writes gets W of the value written under the new
key, and each field whose live value still is the line's W is confirmed under the new key. A field
changed in the platform keeps its W (its value as last loaded is not known here): it stays a
platform edit. Used by the renumbering plan and by the revert of one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from loader.history.comparable import comparable
from loader.history.digests import Digester, RecordDigests, Written, key_text
from loader.history.lines import HistoryLine
from loader.history.store import History
from loader.plan.model import Plan, RecordPlan
from loader.profile import EntityProfile
from loader.record_fields import CUSTOM

LABEL_PREFIX = f"{CUSTOM}."


def rekeyed(record: RecordPlan, line: HistoryLine | None, live: Mapping[str, Any], old: RecordDigests,
            new: RecordDigests, entity: EntityProfile) -> RecordPlan:
    """`record` (planned with the old key's digests `old`) with its W made under its new key (`new`):
    the fields it writes, the fields it confirms, and the line's fields live still holds."""
    written: dict[str, Written] = {}
    confirmed = dict(record.confirmed_values)
    confirming = set(record.confirmed)
    for name, _ in record.written_after:
        value = _value(name, record.payload) if _sends(name, record) else _value(name, live)
        written[name] = _digest(new, name, value, entity)
    for name, mark in (line.fields.items() if line is not None else ()):
        if name in written or _sends(name, record) or name.startswith("#") \
                or (entity.status is not None and name == entity.status.field and record.status_path):
            continue
        value = _value(name, live)
        if _digest(old, name, value, entity, like=mark.written) == mark.written:  # live is what was loaded
            written[name] = _digest(new, name, value, entity, like=mark.written)
            confirming.add(name)
            confirmed.setdefault(name, value)
    after = tuple((n, w if isinstance(w, str) else tuple(sorted(w))) for n, w in sorted(written.items()))
    return replace(record, confirmed=tuple(sorted(confirming)), written_after=after,
                   confirmed_values=tuple(sorted((n, v) for n, v in confirmed.items() if n in confirming)))


def _sends(name: str, record: RecordPlan) -> bool:
    if name.startswith(LABEL_PREFIX):
        return CUSTOM in record.payload
    return name in record.payload


def _value(name: str, values: Mapping[str, Any]) -> Any:
    if name.startswith(LABEL_PREFIX):
        labels = values.get(CUSTOM)
        return labels.get(name[len(LABEL_PREFIX):]) if isinstance(labels, Mapping) else None
    return values.get(name)


def _digest(digests: RecordDigests, name: str, value: Any, entity: EntityProfile, *,
            like: Written | None = None) -> Written:
    """W of `value` of field `name` (per element for a set-like list, or where `like` is a set)."""
    as_set = name in entity.set_fields or (like is not None and not isinstance(like, str))
    if name.startswith(LABEL_PREFIX):
        return digests.written(name, value, as_set=as_set)
    return digests.written(name, comparable(name, value, entity), as_set=as_set)


def moved_keys(plan: Plan, history: History) -> frozenset[tuple[str, str]]:
    """(entity, key token) of every key the plan renumbers away: its line goes with the renumbered
    record, never to a row of the plan that reuses the key."""
    token = history.digester.key_token
    return frozenset((r.entity, token(r.entity, r.renamed_from)) for b in plan.blocks for r in b.records
                     if r.renamed_from is not None)


def renumbered_back(record: RecordPlan, formerly: str, history: History, live: Mapping[str, Any],
                    digester: Digester, entity: EntityProfile,
                    others: Sequence[Mapping[str, Any]]) -> tuple[RecordPlan | None, str | None]:
    """A revert's record of an apply that renumbered it: when the revert puts its key back, it is
    planned under the old key (`formerly`, a key token), renumbered from the key it has now, with
    W made again under the old key (its history line and decisions go back with it). When another
    live record of `others` holds the old key now (a new record reusing it), the key stays: its
    change is left out, with a note."""
    old_key = tuple(json.loads(formerly))
    back = tuple(record.payload.get(name, live.get(name)) for name in entity.key)
    if key_text(back) != formerly:
        return record, None
    holder = next((rec for rec in others if rec.get("id") != live.get("id")
                   and key_text(tuple(rec.get(name) for name in entity.key)) == formerly), None)
    if holder is not None:
        payload = {k: v for k, v in record.payload.items() if k not in entity.key}
        left = replace(record, payload=payload, changes=tuple(c for c in record.changes if c.field not in entity.key))
        note = (f"{', '.join(entity.key)}: cannot go back to {'/'.join(str(k) for k in old_key)}: another live record "
                f"holds it now (id {holder.get('id')})")
        return (left if payload or record.status_path else None), note
    moved = replace(record, ref=f"{record.block}/{'/'.join(str(k) for k in old_key)}", key=old_key,
                    renamed_from=record.key)
    line = history.line_by_id(record.entity, record.live_id) if record.live_id else None
    return rekeyed(moved, line, live, digester.record(record.entity, record.key),
                   digester.record(record.entity, old_key), entity), None
