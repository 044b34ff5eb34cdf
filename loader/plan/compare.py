"""How the planner decides two values are the same: normalisation before comparing.

Spreadsheets and the service spell one value several ways: "101" and 101, 6.0 and 6, a date and
its midnight timestamp, an absent field and null. The planner compares normalised values, so a
re-run on unchanged inputs shows no change; it still sends the desired value as the source gives it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any

from loader.plan.model import PendingId

_MIDNIGHT = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[T ]00:00(?::00(?:\.0+)?)?(?:Z|[+-]00:?00)?)?$")


def normalise(value: Any) -> Any:
    """A comparable form: empties become None, numbers text (6.0 as "6"), dates ISO, maps sorted."""
    if value is None:
        return None
    if type(value) is str:
        if value == "":
            return None
        midnight = _MIDNIGHT.match(value) if len(value) >= 10 and value[4] == "-" else None
        return midnight.group(1) if midnight else value
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, datetime):
        if (value.hour, value.minute, value.second, value.microsecond) == (0, 0, 0, 0):
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        return normalise(str(value))
    if isinstance(value, Mapping):
        items = {k: normalise(v) for k, v in value.items()}
        return {k: v for k, v in sorted(items.items()) if v is not None} or None
    if isinstance(value, (list, tuple)):
        return tuple(normalise(v) for v in value) or None
    return value


def same(desired: Any, live: Any, *, as_set: bool = False) -> bool:
    """Whether `desired` and `live` are the same value (lists compared as sets when `as_set`)."""
    if as_set:
        return set_form(desired) == set_form(live)
    return bool(normalise(desired) == normalise(live))


def set_form(value: Any) -> frozenset[Any]:
    """A list that carries no order, as a set of normalised items (None and [] are empty)."""
    if value is None:
        return frozenset()
    items = value if isinstance(value, (list, tuple, set, frozenset)) else [value]
    return frozenset(n for n in (normalise(v) for v in items) if n is not None)


def sorted_list(values: Iterable[Any]) -> list[Any]:
    """A stable order for sending a set-like list: by normalised text, ids not known yet last."""
    unique: dict[tuple[int, str], Any] = {}
    for v in values:
        key = (1, v.ref) if isinstance(v, PendingId) else (0, str(normalise(v)))
        unique.setdefault(key, v)
    return [unique[k] for k in sorted(unique)]


def fold(value: Any) -> str:
    """The case- and whitespace-folded form used to spot near-duplicate keys."""
    return "".join(str(normalise(value) or "").split()).casefold()


def merge_labels(live: Mapping[str, Any] | None, desired: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A label map (custom attributes) as an update must send it, and the labels that change.

    Labels the source does not manage keep their live values; a desired label equal to its live
    value is no change; a label cleared in the source is removed.
    """
    merged = dict(live or {})
    changed = []
    for label, value in desired.items():
        if same(value, merged.get(label)):
            continue
        changed.append(label)
        if normalise(value) is None:
            merged.pop(label, None)
        else:
            merged[label] = value
    return merged, changed
