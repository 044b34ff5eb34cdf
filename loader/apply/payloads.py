"""Pure helpers of the executor: payloads with pending ids filled in, keys of a payload, what an
adopted record still lacks compared with the payload meant to create it, and an update's labels
made over the record as it is when written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from loader.plan.compare import merge_labels, same
from loader.plan.model import PendingId
from loader.profile import EntityProfile
from loader.record_fields import CUSTOM as CUSTOM_ATTRIBUTES


class UnresolvedPending(Exception):
    """A payload refers to a record of the plan whose id is not known (it was not created)."""

    def __init__(self, ref: str):
        super().__init__(ref)
        self.ref = ref


def substitute(value: Any, ids: Mapping[str, str]) -> Any:
    """`value` as plain JSON with each PendingId replaced by the id in `ids` (tuples become lists)."""
    kind = value.__class__  # exact classes first: a payload is dicts, lists and text (an ABC check costs more)
    if kind is str or value is None or kind is int or kind is bool or kind is float:
        return value
    if kind is dict:
        return {k: substitute(v, ids) for k, v in value.items()}
    if isinstance(value, PendingId):
        try:
            return ids[value.ref]
        except KeyError:
            raise UnresolvedPending(value.ref) from None
    if isinstance(value, Mapping):
        return {k: substitute(v, ids) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [substitute(v, ids) for v in value]
    return value


def _plain(value: Any) -> Any:
    """A reference in either shape ({"id": x} or x) as the bare id; other values unchanged."""
    if isinstance(value, Mapping) and set(value) == {"id"}:
        return value["id"]
    return value


def lookup_key(payload: Mapping[str, Any], key_fields: Sequence[str], entity: EntityProfile) -> dict[str, Any] | None:
    """The record's key as field -> plain value, taken by name from the (substituted) payload.

    The key fields are the mapping block's (carried in the plan), so the look-up asks for what
    the plan matched on. A key field the payload leaves out (or sends as null) is None and matches
    a live record without that field: the create did not set it either. None when a key field is
    set by the service (read-only, e.g. `id`) or is not a plain value: then the record cannot be
    looked up, and a lost create fails as unknown rather than risk a second.
    """
    if not key_fields or any(name in entity.read_only for name in key_fields):
        return None
    key: dict[str, Any] = {}
    for name in key_fields:
        value = _plain(payload.get(name))
        if isinstance(value, (PendingId, Mapping, list, tuple)):
            return None
        key[name] = value
    return key


def matches_key(live: Mapping[str, Any], key: Mapping[str, Any]) -> bool:
    """Exact match of every key field (codes differing in letter case are different records)."""
    return all(_plain(live.get(name)) == value for name, value in key.items())


def filterable(key: Mapping[str, Any]) -> dict[str, Any]:
    """The key fields the service can filter a list on (top-level scalars)."""
    return {k: v for k, v in key.items() if isinstance(v, (str, int, float, bool))}  # None: matched locally


def _same(name: str, live: Any, wanted: Any, entity: EntityProfile) -> bool:
    """The planner's notion of equal values (loader.plan.compare), so an adopted record is patched
    exactly when a plan would have shown a change."""
    if name in entity.set_fields:
        return same([_plain(v) for v in wanted or ()], [_plain(v) for v in live or ()], as_set=True)
    return same(wanted, live)


def missing_changes(live: Mapping[str, Any], payload: Mapping[str, Any], entity: EntityProfile) -> dict[str, Any]:
    """The update that makes an adopted `live` record match `payload` (empty when it already does).

    Read-only, create-only and immutable fields are left out: they cannot be updated.
    `custom_attributes` is compared per label and, when it differs, sent merged over the live
    map, because an update replaces the whole map.
    """
    patch: dict[str, Any] = {}
    fixed = entity.read_only | entity.create_only | entity.immutable
    if entity.status is not None:
        fixed = fixed | {entity.status.field}
    for name, wanted in payload.items():
        if name in fixed:
            continue
        current = live.get(name)
        if name == CUSTOM_ATTRIBUTES and isinstance(wanted, Mapping):
            merged, changed = merge_labels(current if isinstance(current, Mapping) else {}, wanted)
            if changed:
                patch[name] = merged
            continue
        if not _same(name, current, wanted, entity):
            patch[name] = wanted
    return patch


def labels_over(payload: Mapping[str, Any], changed: Iterable[str], live: Mapping[str, Any] | None) -> dict[str, Any]:
    """`payload` with its `custom_attributes` made again over the labels `live` holds now: only the
    labels the plan `changed` take the payload's values (absent: removed), every other label keeps
    live's. An update replaces the whole map, and the map the plan drafted is the one live held
    when it was fetched: a label a person added since (during a long apply) would be wiped."""
    sent = payload.get(CUSTOM_ATTRIBUTES)
    if not isinstance(sent, Mapping):
        return dict(payload)
    now = live.get(CUSTOM_ATTRIBUTES) if live is not None else None
    merged, _ = merge_labels(now if isinstance(now, Mapping) else {}, {label: sent.get(label) for label in changed})
    return {**payload, CUSTOM_ATTRIBUTES: merged}
