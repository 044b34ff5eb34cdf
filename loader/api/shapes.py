"""The shapes of a record's common fields (spec 2.2, 2.3), checked where answers come in.

Everything after the client trusts these shapes: the planner reads `custom_attributes` as a map
and `metadata.updated.time` as a number, the executor sends `id` back in paths. A service (or
something between it and us) that answers otherwise is reported as a malformed answer naming the
request and the record, never met later as an internal error.

    id                 text or a whole number (required, but for the answer to a write)
    custom_attributes  an object of label -> text, number, true/false or null
    metadata           an object; its `created` and `updated` objects; their `time` a number
    parent             an object holding an `id` (text, a whole number or null)
    children           a list

Each other field may be absent or null.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_SCALARS = (str, int, float, bool, type(None))
_PLAIN = frozenset(_SCALARS)
_TIMES = frozenset({int, float, type(None)})


def kind(value: object) -> str:
    """What a JSON value is, in words (never the value itself: it may be personal data)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def record_problem(record: Mapping[str, Any], *, id_required: bool = True) -> str | None:
    """What is wrong with `record`'s common fields (`` `metadata` is text, not an object``), or None.

    A write's answer may leave the id out (`id_required=False`): a create is then looked up by key.
    Run on every record of every list: exact-class checks first, words only on
    a problem.
    """
    get = record.get
    ident = get("id")
    if ident.__class__ is not str and not _is_id(ident, id_required):
        return "it has no `id`" if ident is None else _wrong("id", ident, "text or a whole number")
    labels = get("custom_attributes")
    if labels is not None and not _labels_plain(labels):
        return _label_problem(labels)
    metadata = get("metadata")
    if metadata is not None and not _stamps_plain(metadata):
        return _metadata_problem(metadata)
    parent = get("parent")
    if parent is not None and (parent.__class__ is not dict or not _is_parent_id(parent.get("id"))):
        return _parent_problem(parent)
    children = get("children")
    if children is not None and children.__class__ is not list:
        return _wrong("children", children, "a list")
    return None


def _labels_plain(labels: object) -> bool:
    """The exact-class check of `custom_attributes`: a dict of plain JSON scalars."""
    if labels.__class__ is not dict:
        return False
    for value in labels.values():
        if value.__class__ is not str and value.__class__ not in _PLAIN:
            return False
    return True


def _stamps_plain(metadata: object) -> bool:
    """The exact-class check of `metadata`: a dict whose `created` and `updated` hold a numeric `time`."""
    if metadata.__class__ is not dict:
        return False
    for stamp in (metadata.get("created"), metadata.get("updated")):
        if stamp is not None and (stamp.__class__ is not dict or stamp.get("time").__class__ not in _TIMES):
            return False
    return True


def _is_parent_id(value: object) -> bool:
    """Text, a whole number, or null (`{"id": null}`: no parent)."""
    return value.__class__ is str or _is_id(value, False)


def _parent_problem(parent: object) -> str:
    if parent.__class__ is not dict or not isinstance(parent, dict):
        return _wrong("parent", parent, "an object holding an id")
    return _wrong("parent.id", parent.get("id"), "text or a whole number")


def _is_id(value: object, required: bool) -> bool:
    """Whether `value` (not a str: checked before) may be an id: a whole number, or absent when not required."""
    if value is None:
        return not required
    return isinstance(value, int) and not isinstance(value, bool)


def _label_problem(labels: object) -> str | None:
    if labels.__class__ is not dict or not isinstance(labels, dict):
        return _wrong("custom_attributes", labels, "an object of label to value")
    for label, value in labels.items():
        if not isinstance(value, _SCALARS):
            return _wrong(f"custom_attributes.{label}", value, "a value")
    return None


def _metadata_problem(metadata: object) -> str | None:
    if metadata.__class__ is not dict and not isinstance(metadata, dict):
        return _wrong("metadata", metadata, "an object")
    for part in ("created", "updated"):
        stamp = metadata.get(part)
        if stamp is None:
            continue
        if stamp.__class__ is not dict and not isinstance(stamp, dict):
            return _wrong(f"metadata.{part}", stamp, "an object")
        time = stamp.get("time")
        if time.__class__ is not int and time is not None and (
            not isinstance(time, int | float) or isinstance(time, bool)
        ):
            return _wrong(f"metadata.{part}.time", time, "a number")
    return None


def _wrong(field: str, value: object, expected: str) -> str:
    return f"`{field}` is {kind(value)}, not {expected}"
