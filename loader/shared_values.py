"""One object for each value repeated across many records, for the records a plan holds all of.

A plan holds every desired and live record at once; a field with few distinct values (a type, a
status, custom attributes, a list of deliveries) otherwise holds a copy of its value per record.
`FewValues` keeps one object per distinct value of each field while the field has had at most
`distinct` of them, and stops looking its values up once it has more (codes, names, ids).

Shared values are read, never changed: the planner copies what it changes (`loader.plan.fields`).
Numbers are left alone (1, 1.0 and True are equal keys); only texts, and objects and lists of
texts (or nulls), are shared.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class FewValues:
    """The values of each field seen so far, one object per distinct value (see the module docstring)."""

    def __init__(self, distinct: int = 1024):
        self._distinct = distinct
        self._values: dict[str, dict[Any, Any]] = {}  # field -> its values seen (as hashable keys) -> the one kept
        self._many: set[str] = set()  # fields with more than `distinct` values: not shared

    def share(self, fields: dict[str, Any]) -> None:
        """Each value of `fields` (a dict of field -> value, changed in place) replaced by the object
        kept for its value, when its field has few."""
        shared = [(name, kept) for name, value in fields.items() if (kept := self.one(name, value)) is not value]
        for name, kept in shared:
            fields[name] = kept

    def one(self, name: str, value: Any) -> Any:
        """The object kept for `value` of field `name` (`value` itself when it is the first, or not shared)."""
        if name in self._many:
            return value
        kind = type(value)
        if kind is str:
            key: Any = value
        elif kind is dict and _texts(value.values()):
            key = (True, *value.items())
        elif kind is list and _texts(value):
            key = (False, *value)
        else:
            return value
        values = self._values.setdefault(name, {})
        kept = values.get(key)
        if kept is None:
            if len(values) >= self._distinct:
                self._many.add(name)
                del self._values[name]
                return value
            kept = values[key] = value
        return kept


def _texts(values: Iterable[Any]) -> bool:
    """Whether every value is a text or None."""
    for value in values:
        if type(value) is not str and value is not None:
            return False
    return True
