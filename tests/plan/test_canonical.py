"""The canonical form of plan values: subclasses written as the values they stand for."""

from __future__ import annotations

from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum, IntEnum, StrEnum
from types import MappingProxyType

from loader.plan.canonical import canonical, encode
from loader.plan.model import PendingId


class _Level(StrEnum):
    HIGH = "high"

    def __str__(self) -> str:
        return "not the text"


class _Rank(IntEnum):
    FIRST = 1


class _Colour(Enum):
    RED = 2.0


class _Text(str):
    pass


def _text(value: object) -> bytes:
    return encode(canonical(value))


def test_subclasses_of_text_and_numbers_are_their_values_whatever_they_print() -> None:
    assert _text(_Level.HIGH) == _text("high")
    assert _text(_Rank.FIRST) == _text(1) == _text(1.0) == _text(Decimal("1.0"))
    assert _text(_Colour.RED) == _text(2)
    assert _text(_Text("a")) == _text("a")
    assert _text([_Rank.FIRST, (_Level.HIGH,)]) == _text([1, ["high"]])


def test_mappings_sets_dates_and_pending_ids_have_one_form_each() -> None:
    assert _text(MappingProxyType({"b": 1, 2: "x"})) == _text({"2": "x", "b": 1})
    assert _text({3, 1, 2}) == _text(frozenset({2, 3, 1}))
    assert _text(date(2001, 2, 3)) == _text("2001-02-03")
    assert _text(datetime(2001, 2, 3, 4, 5)) == _text("2001-02-03T04:05:00")
    assert _text(time(4, 5)) == _text("04:05:00")
    assert _text({"id": PendingId("r1")}) == b'{"id":{"$pending":"r1"}}'
    assert _text(Decimal("NaN")) == b'{"$float":"NaN"}'
    assert _text(2**70) == str(2**70).encode()
    assert _text(object.__new__(_Opaque)) == b'{"$text":"opaque"}'


class _Opaque:
    def __str__(self) -> str:
        return "opaque"
