"""A cell's value as people read it, and the error a value step gives about one.

A field marked `pii: true` never has its value spelt out in a message (contract section 7).
"""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Any

from loader.source.readers import CellValue
from loader.source.records import quoted


class StepError(ValueError):
    """A value step failed; the message says what was expected and what was found.

    `said` is the message up to the found value, which `_shown` renders; `hidden()` gives the same
    error for a PII field, with the value left out.
    """

    def __init__(self, said: str, found: Any, *, pii: bool = False) -> None:
        super().__init__(said + _shown(found, pii))
        self.said = said
        self.pii = pii
        self._found = found

    def hidden(self) -> StepError:
        return self if self.pii else StepError(self.said, self._found, pii=True)


def text_of(value: CellValue | Any) -> str:
    """The text a user sees for a value: 101 -> "101", a date -> "2027-02-28"."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 2**63 else repr(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return str(value)


def _shown(value: Any, pii: bool = False) -> str:
    """A found value for a message: quoted and cut short; a PII value is never spelt out."""
    if pii:
        return quoted(value, pii)
    text = repr(text_of(value)) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "...'"
