"""Regular expressions from mapping files, with the work each match may do bounded.

A pattern such as `^(a|aa)+$` takes exponential time on a long cell with Python's `re`, which has
no time limit: one bad `pattern:` could hang `loader validate`. Mapping regexes are compiled with
the `regex` package (the syntax of `re`): `pattern`, `replace` and `matches` in `where`/`when`.
Every match is given `TIMEOUT_S`; a match that runs out of time is an error at its cell or row,
not a hang.
"""

from __future__ import annotations

import re
from typing import Final

import regex

TIMEOUT_S: Final = 0.25

Pattern = regex.Pattern[str]


class PatternTimeout(ValueError):
    """A match ran out of time."""


def compile_pattern(text: str) -> Pattern:
    """Raises ValueError saying what is wrong with the expression (in the words of Python's `re`)."""
    try:
        re.compile(text)
        return regex.compile(text, flags=regex.VERSION0)
    except re.error as exc:
        raise ValueError(str(exc)) from None
    except regex.error as exc:
        raise ValueError(str(exc)) from None


def full_match(pattern: Pattern, text: str) -> bool:
    try:
        return pattern.fullmatch(text, timeout=TIMEOUT_S) is not None
    except TimeoutError:
        raise PatternTimeout(_too_long(pattern)) from None


def search(pattern: Pattern, text: str) -> bool:
    try:
        return pattern.search(text, timeout=TIMEOUT_S) is not None
    except TimeoutError:
        raise PatternTimeout(_too_long(pattern)) from None


def substitute(pattern: Pattern, replacement: str, text: str) -> str:
    try:
        return pattern.sub(replacement, text, timeout=TIMEOUT_S)
    except TimeoutError:
        raise PatternTimeout(_too_long(pattern)) from None


def _too_long(pattern: Pattern) -> str:
    return (f"the regular expression {pattern.pattern!r} took over {TIMEOUT_S} s on this cell and was stopped "
            "(nested repeats such as (a+)+ can take forever); simplify it")
