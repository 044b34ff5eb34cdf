"""The planner's comparisons beyond one value: set-like lists in a stable order, label maps.

Whether two values are the same is decided in one place, `loader.source.equality` (the source's
rows agreeing and the plan's desired-versus-live use the one notion).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from loader.plan.model import PendingId
from loader.source.equality import fold, normalise, same, set_form

__all__ = ["fold", "merge_labels", "normalise", "same", "set_form", "sorted_list"]

def sorted_list(values: Iterable[Any]) -> list[Any]:
    """A stable order for sending a set-like list: by normalised text, ids not known yet last."""
    unique: dict[tuple[int, str], Any] = {}
    for v in values:
        key = (1, v.ref) if isinstance(v, PendingId) else (0, str(normalise(v)))
        unique.setdefault(key, v)
    return [unique[k] for k in sorted(unique)]


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
