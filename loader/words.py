"""Counts in words: "1 error", "2 errors", "1,204 errors". The one place a count meets its noun."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`count` and `noun`, or `many` (default: `noun` + "s") when the count is not 1."""
    return f"{count:,} {noun if count == 1 else many or noun + 's'}"
