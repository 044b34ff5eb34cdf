"""The canonical form of plan values: what `loader.plan.digest` hashes.

JSON (orjson) with sorted keys and no spaces; integral floats written as integers (1.0 == 1),
other floats as Python's repr (not orjson's text, which may change with its version), Decimal as
its float, NaN and infinities as {"$float": "nan"}, dates and times as ISO text, tuples as lists,
sets as lists in the order of their items' canonical text, PendingId as {"$pending": ref}, integers
beyond 64 bits as their digits, dict keys that are not text as their canonical value's text, any
other type as {"$text": str(value)}. A text holding a lone surrogate is written as its
surrogate-passing bytes in hex.

`canonical` picks the form by the value's exact type in a table (the common case); a subclass
(a StrEnum, an IntEnum, a Mapping that is not a dict) is asked its kinds in order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from typing import Any

import orjson

from loader.plan.model import PendingId

SCALARS: frozenset[type] = frozenset({str, int, bool, type(None), PendingId})  # orjson writes them as they are
_PLAIN: frozenset[type] = frozenset({str, bool, type(None), PendingId})  # kept as they are
_INT_RANGE = range(-(2**63), 2**64)  # what orjson writes as a number; beyond it, digits as a fragment


def encode(value: Any) -> bytes:
    """Canonical JSON bytes of a value made of plain values (str, int, bool, None, dict with text
    keys, list, tuple, PendingId) or of `canonical`'s output. A text holding a lone surrogate (a
    CSV read with escaped bytes, a service answer's `\\udcff`) is not UTF-8: it is written as its
    surrogate-passing bytes in hex, a form no other value takes."""
    try:
        return orjson.dumps(value, default=_pending, option=_OPTIONS)
    except orjson.JSONEncodeError as error:
        if "surrogates" not in str(error):
            raise
        return orjson.dumps(_surrogates_marked(value), default=_pending, option=_OPTIONS)


def _surrogates_marked(value: Any) -> Any:
    if isinstance(value, str):
        hexed = _surrogate_hex(value)
        return value if hexed is None else {"$surrogates": hexed}
    if isinstance(value, Mapping):  # a key stays text: the marker is spelled into it
        return {_marked_key(k): _surrogates_marked(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_surrogates_marked(v) for v in value]
    return value


def _surrogate_hex(text: str) -> str | None:
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").hex()
    return None


def _marked_key(key: Any) -> Any:
    hexed = _surrogate_hex(key) if isinstance(key, str) else None
    return key if hexed is None else f"$surrogates:{hexed}"


# Dataclasses, datetimes and subclasses of str, int, dict and list come to `_pending` (never in
# orjson's own form, which would differ from the canonical one), so only plain values reach orjson.
_OPTIONS = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
            | orjson.OPT_PASSTHROUGH_SUBCLASS)


def _pending(value: Any) -> Any:
    """orjson's `default`: a PendingId in a plain record (the only non-JSON value one may hold)."""
    if type(value) is PendingId:
        return {"$pending": value.ref}
    raise TypeError(f"not canonical: {type(value).__name__}")


def free(value: Any) -> Any:
    """A free-form value (a key, a payload, an old or new value) in canonical form: as it is where it
    is plain (str, int, bool, None, PendingId, dicts, lists and tuples of them, which orjson writes in
    canonical form), else walked by `canonical`: the check is much cheaper than the walk it saves."""
    return value if type(value) in SCALARS or _plain(value) else canonical(value)


def _plain_values(values: Iterable[Any]) -> bool:
    for value in values:  # a loop, not all(...): the generator cost more than the check
        if type(value) not in SCALARS and not _plain(value):
            return False
    return True


def _plain(value: Any) -> bool:
    kind = type(value)
    if kind is dict:
        return _plain_values(value.values())
    if kind is list or kind is tuple:
        return _plain_values(value)
    return kind in SCALARS


def canonical(value: Any) -> Any:
    """A value orjson writes the same for equal plan values on any machine."""
    form = _BY_TYPE.get(type(value))
    if form is not None:
        return form(value)
    for kinds, subclass_form in _BY_KIND:
        if isinstance(value, kinds):
            return subclass_form(value)
    return {"$text": str(value)}


def _as_is(value: Any) -> Any:
    return value


def _int(value: int) -> Any:
    return value if value in _INT_RANGE else orjson.Fragment(str(value).encode())


def _float(value: float) -> Any:
    """An integral float as its int, NaN and infinities marked, any other float as Python's repr:
    the shortest text that reads back as it, the same on any machine (orjson's own float text may
    change from one orjson version to another)."""
    if not math.isfinite(value):
        return {"$float": repr(value)}
    return _int(int(value)) if value.is_integer() else orjson.Fragment(repr(value).encode())


def _dict(value: dict[Any, Any]) -> dict[str, Any]:
    return {k if type(k) is str else _key(k): v if type(v) in _PLAIN else canonical(v) for k, v in value.items()}


def _list(value: list[Any] | tuple[Any, ...]) -> list[Any]:
    return [v if type(v) in _PLAIN else canonical(v) for v in value]


def _decimal(value: Decimal) -> Any:
    return _float(float(value)) if value.is_finite() else {"$float": str(value)}


def _mapping(value: Mapping[Any, Any]) -> dict[str, Any]:
    return {k if type(k) is str else _key(k): canonical(v) for k, v in value.items()}


def _key(key: Any) -> str:
    """A dict key that is not text as text: its canonical value's (1.0 and 1 are one key)."""
    value = canonical(key)
    return value if type(value) is str else encode(value).decode()


def sorted_by_text(values: Iterable[Any]) -> list[orjson.Fragment]:
    """The values' canonical texts in order: the same list for equal values in any order."""
    return [orjson.Fragment(text) for text in sorted(encode(canonical(v)) for v in values)]


# The form of each exact type (a fragment: canonical text made here).
_BY_TYPE: dict[type, Callable[[Any], Any]] = {
    **dict.fromkeys((*_PLAIN, orjson.Fragment), _as_is),
    int: _int,
    float: _float,
    dict: _dict,
    list: _list,
    tuple: _list,
}

# A subclass's form, its kinds asked in this order: a StrEnum is its text whatever its __str__
# says, an IntEnum its number (bool is final: only int's subclasses come to int).
_BY_KIND: tuple[tuple[type | tuple[type, ...], Callable[[Any], Any]], ...] = (
    (str, str.__str__),
    (int, lambda value: _int(int.__int__(value))),
    (float, lambda value: _float(float(value))),
    (Decimal, _decimal),
    (Enum, lambda value: canonical(value.value)),
    ((datetime, date, time), lambda value: value.isoformat()),
    (PendingId, lambda value: {"$pending": value.ref}),
    (Mapping, _mapping),
    ((list, tuple), lambda value: [canonical(v) for v in value]),
    ((set, frozenset), sorted_by_text),
)
