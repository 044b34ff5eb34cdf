"""A set of marks (ints below 2**60, such as masked hashes) that answers "maybe in": two bits a mark.

    marks = Marks(expected=len(records))
    marks.add(mark)
    if mark in marks: ...   # surely when added; for a mark not added, rarely

A set of the marks held about 84 bytes a mark at 350,000 of them (a 32-byte int and its slots);
this holds 4-8 bytes a mark. Its users take "maybe" as the safe answer: drafting plans a record at
the end (`loader.plan.incremental.early`), the history keeps a live record whole
(`loader.plan.history_pass.HistoryCompare.named_more_than_once`).
"""

from __future__ import annotations

from collections.abc import Hashable


class Marks:
    """Two bits a mark in a bit array (a Bloom filter). "Maybe" for a mark not added is rare: 0.1-0.3%
    when as many marks were added as `expected`, 1-2.7% with three times as many."""

    __slots__ = ("_bits", "_mask")

    def __init__(self, expected: int):
        size = 1 << max(16, (expected * 32).bit_length())  # bits: 32 to 64 a mark, at least 8 KiB
        self._bits = bytearray(size >> 3)
        self._mask = size - 1

    def add(self, mark: int) -> None:
        bits, mask = self._bits, self._mask
        first, second = mark & mask, (mark >> 30) & mask
        bits[first >> 3] |= 1 << (first & 7)
        bits[second >> 3] |= 1 << (second & 7)

    def __contains__(self, mark: int) -> bool:
        bits, mask = self._bits, self._mask
        first, second = mark & mask, (mark >> 30) & mask
        return bool(bits[first >> 3] & (1 << (first & 7))) and bool(bits[second >> 3] & (1 << (second & 7)))


def mark_of(value: Hashable) -> int:
    """A value (a text, a key) as a mark: equal values have equal marks; two others rarely do. Below
    2**60, so a mark is one small int object."""
    return hash(value) & _MARK_BITS


_MARK_BITS = (1 << 60) - 1
