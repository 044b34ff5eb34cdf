""""Did you mean …?": the closest of the known names to what a user wrote.

One notion of close for every message (sheets, columns, keys, entities, references): the same
name but for case and surrounding spaces first, then the closest spelling.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

_SPACES = " \t\r\n\u00a0\u2007\u202f\ufeff"


def closest(wanted: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The choice a user most likely meant by `wanted`, or None when none is close."""
    options = list(choices)
    folded = wanted.strip(_SPACES).casefold()
    for choice in options:
        if choice.strip(_SPACES).casefold() == folded:
            return choice
    close = difflib.get_close_matches(wanted, options, n=1, cutoff=cutoff)
    return close[0] if close else None


def did_you_mean(wanted: str, choices: Iterable[str]) -> str:
    """" (did you mean 'X'?)" to append to a message, or "" when nothing is close."""
    choice = closest(wanted, choices)
    return f" (did you mean {choice!r}?)" if choice is not None else ""
