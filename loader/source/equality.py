"""When two values are the same: one notion for rows that must agree, the plan, and apply.

Spreadsheets and the service spell one value several ways: "101" and 101, 6.0 and 6, a date and
its midnight timestamp, an absent field and null. Values are compared normalised, so rows of one
key that differ only in spelling agree, and a re-run on unchanged inputs shows no change; the value
sent is still the one the source gives.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any

from loader.record_fields import CUSTOM
from loader.source.records import Ref

_MIDNIGHT = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[T ]00:00(?::00(?:\.0+)?)?(?:Z|[+-]00:?00)?)?$")


def normalise(value: Any) -> Any:
    """A comparable form: empties become None, numbers text (6.0 as "6"), dates ISO, maps sorted."""
    if value is None:
        return None
    if type(value) is str:  # the common case, kept inline
        if value == "":
            return None
        midnight = _MIDNIGHT.match(value) if len(value) >= 10 and value[4] == "-" else None
        return midnight.group(1) if midnight else value
    by_type = _BY_TYPE.get(type(value))
    if by_type is not None:
        return by_type(value)
    for kind, by_kind in _BY_KIND:  # subclasses: an IntEnum, a str subclass, a mapping type
        if isinstance(value, kind):
            return by_kind(value)
    return value


def _number(value: float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _moment(value: datetime) -> str:
    """A datetime at midnight is its date; any other keeps its time."""
    if (value.hour, value.minute, value.second, value.microsecond) == (0, 0, 0, 0):
        return value.date().isoformat()
    return value.isoformat()


def _mapping(value: Mapping[Any, Any]) -> dict[Any, Any] | None:
    items = {k: normalise(v) for k, v in value.items()}
    return {k: v for k, v in sorted(items.items()) if v is not None} or None


def _sequence(value: list[Any] | tuple[Any, ...]) -> tuple[Any, ...] | None:
    return tuple(normalise(v) for v in value) or None


def _same_value(value: Any) -> Any:
    return value


# How each kind of value is normalised, in the order kinds are tried for subclasses (bool before
# int, datetime before date); _BY_TYPE finds an exact type in one look-up.
_BY_KIND: tuple[tuple[type | tuple[type, ...], Callable[[Any], Any]], ...] = (
    (bool, _same_value),
    ((int, float), _number),
    (datetime, _moment),
    (date, date.isoformat),
    (str, lambda value: normalise(str(value))),
    (Mapping, _mapping),
    ((list, tuple), _sequence),
)
_BY_TYPE: dict[type, Callable[[Any], Any]] = {
    bool: _same_value, int: _number, float: _number, datetime: _moment, date: date.isoformat,
    dict: _mapping, list: _sequence, tuple: _sequence,
}


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


def fold(value: Any) -> str:
    """The case- and whitespace-folded form used to spot near-duplicate keys."""
    return "".join(str(normalise(value) or "").split()).casefold()


def same_source_value(a: Any, b: Any) -> bool:
    """Whether two rows give one field the same value: references and lists exactly (a list's order
    is the source's), everything else normalised."""
    if isinstance(a, Ref) or isinstance(b, Ref) or isinstance(a, tuple | list):
        return a == b or (isinstance(a, tuple | list) and isinstance(b, tuple | list) and list(a) == list(b))
    return same(a, b)


def first_difference(a: Mapping[str, Any], b: Mapping[str, Any]) -> str | None:
    """The first field (in name order; `custom_attributes.<Label>` for a label) whose value differs
    between two rows' fields, or None when they agree. A field one row lacks differs."""
    for name in sorted(set(a) | set(b)):
        labels_a, labels_b = a.get(name), b.get(name)
        if name == CUSTOM and isinstance(labels_a or {}, Mapping) and isinstance(labels_b or {}, Mapping):
            # Label by label, also when one row has none: a difference names its label, so a PII
            # label's value is masked like any PII field's.
            label = first_difference(labels_a or {}, labels_b or {})
            if label is not None:
                return f"{CUSTOM}.{label}"
            continue
        if name not in a or name not in b:
            return name
        elif not same_source_value(a[name], b[name]):
            return name
    return None
