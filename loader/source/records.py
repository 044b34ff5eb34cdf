"""Desired records: what the source says a record should be, with the cells it came from.

Files -> rows -> DesiredRecord (this module's types) -> plan -> apply.
Everything here is immutable. Reading makes these the fast way (`loader.source.makers`): the
same values, made a slot at a time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from loader.places import CellRef


@dataclass(frozen=True, slots=True)
class Ref:
    """An unresolved reference to a record of `entity` whose key fields `by` equal `values`.

    The planner resolves it to a live id, or to a record the same plan creates.
    """

    entity: str
    values: tuple[str, ...]
    by: tuple[str, ...] = ("code",)
    cell: CellRef | None = field(default=None, compare=False)

    def __str__(self) -> str:
        shown = ", ".join(f"{f}={v!r}" for f, v in zip(self.by, self.values, strict=False))
        return f"{self.entity}({shown})"


def display_value(value: Any) -> Any:
    """A value as a reviewer reads it: a Ref by its values joined by '/', lists item by item.

    Anything else is returned as is, so numbers stay numbers in reports and plan.json. The one
    place a reference or key is turned into text for messages, refs and reports.
    """
    if isinstance(value, Ref):
        return "/".join(str(v) for v in value.values)
    if isinstance(value, (list, tuple)):
        return [display_value(v) for v in value]
    return value


def quoted(value: Any, pii: bool) -> str:
    """A value for a message; a PII value is never spelt out (reports mask it everywhere); an empty
    one (None) reads `empty`, never `None`."""
    if value is None:
        return "empty"
    return "(hidden)" if pii else repr(value)


@dataclass(frozen=True, slots=True)
class DesiredRecord:
    """One record as the source says it should be.

    `fields` holds only managed fields (those the mapping sets for this row, after `empty:`
    rules): plain JSON values, a `Ref`, or a tuple of `Ref` for list references.
    `custom_attributes`, when managed, is a dict of label -> value (only managed labels).
    A cleared field holds None (or () / [] for lists).
    `cells` maps a field name (or `custom_attributes.<Label>`) to the cell it came from.
    `pii` names the fields the mapping marks `pii: true`.
    `also_rows` are the other rows merged into this one, as (block, row): rows of the block with
    the same key and values, or rows of other blocks with the same key.
    """

    block: str
    entity: str
    key: tuple[Any, ...]
    fields: Mapping[str, Any]
    row: CellRef
    cells: Mapping[str, CellRef] = field(default_factory=dict)
    pii: frozenset[str] = frozenset()
    also_rows: tuple[tuple[str, CellRef], ...] = ()

    def place(self, field_name: str) -> CellRef:
        """The cell a field came from, or the row when the field has no single cell."""
        return self.cells.get(field_name, self.row)
