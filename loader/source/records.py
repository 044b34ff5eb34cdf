"""Desired records: what the source says a record should be, with the cells it came from.

Files -> rows -> DesiredRecord (this module's types) -> plan -> apply.
Everything here is immutable.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from itertools import repeat
from typing import Any, TypeVar

from loader.places import CellRef

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Ref:
    """An unresolved reference to a record of `entity` whose key fields `by` equal `values`.

    The planner resolves it to a live id, or to a record the same plan creates.
    """

    entity: str
    values: tuple[str, ...]
    by: tuple[str, ...] = ("code",)
    cell: CellRef | None = field(default=None, compare=False)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return Ref, (self.entity, self.values, self.by, self.cell)  # see DesiredRecord.__reduce__

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
    """A value for a message; a PII value is never spelt out (reports mask it everywhere)."""
    return "(hidden)" if pii and value is not None else repr(value)


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

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Pickled (the reading child sends every record) as the values of its slots, made again by
        # setting them: the slotted dataclass's own __setstate__ took twice the time to unpickle.
        return _desired_from_slots, (self.block, self.entity, self.key, self.fields, self.row, self.cells,
                                     self.pii, self.also_rows)

    def place(self, field_name: str) -> CellRef:
        """The cell a field came from, or the row when the field has no single cell."""
        return self.cells.get(field_name, self.row)


def desired_record(
    block: str, entity: str, key: tuple[Any, ...], fields: Mapping[str, Any], row: CellRef,
    cells: Mapping[str, CellRef], pii: frozenset[str], /,
) -> DesiredRecord:
    """DesiredRecord(block, entity, key, fields, row, cells, pii), made the fast way: reading makes one
    per row. A frozen dataclass's __init__ sets each field through object.__setattr__ (1.8 µs here);
    this sets its slots directly (the instance is the same: tests/source/test_column_builder.py).
    Slots, not a __dict__: 105 bytes a record where a filled __dict__ took 336."""
    return _desired_from_slots(block, entity, key, fields, row, cells, pii, ())


def _desired_from_slots(
    block: str, entity: str, key: tuple[Any, ...], fields: Mapping[str, Any], row: CellRef,
    cells: Mapping[str, CellRef], pii: frozenset[str], also_rows: tuple[tuple[str, CellRef], ...], /,
) -> DesiredRecord:
    made = object.__new__(DesiredRecord)
    put = _DESIRED_SLOTS  # one setter per field, in field order
    put[0](made, block), put[1](made, entity), put[2](made, key), put[3](made, fields)
    put[4](made, row), put[5](made, cells), put[6](made, pii), put[7](made, also_rows)
    return made


_DESIRED_SLOTS = tuple(DesiredRecord.__dict__[f.name].__set__ for f in dataclass_fields(DesiredRecord))


def desired_records(
    block: str, entity: str, keys: Sequence[tuple[Any, ...]], fields: Sequence[Mapping[str, Any]],
    rows: Sequence[CellRef], cells: Sequence[Mapping[str, CellRef]], pii: frozenset[str],
) -> list[DesiredRecord]:
    """`desired_record` over columns: the i-th record of keys[i], fields[i], rows[i], cells[i] (of
    one length). Each slot is set over the whole column by one `map` (no Python frame per record)."""
    return slotted_many(DesiredRecord, _DESIRED_SLOTS, len(keys),
                        (repeat(block), repeat(entity), keys, fields, rows, cells, repeat(pii), repeat(())))


def row_places(file: str, sheet: str | None, numbers: Sequence[int], repeat_note: str = "") -> list[CellRef]:
    """`row_place` over a column of row numbers."""
    return slotted_many(CellRef, _CELL_REF_SLOTS, len(numbers),
                        (repeat(file), repeat(sheet), repeat(None), numbers, repeat(repeat_note)))


def slotted_many(kind: type[_T], setters: Sequence[Callable[[_T, Any], None]], count: int,
                 columns: Iterable[Iterable[Any]]) -> list[_T]:
    """`count` new instances of a slotted class, slot k of the i-th set to the i-th value of columns[k].

    Every slot must be given a column (an unset slot raises AttributeError when read). Making
    100,000 records this way took 0.9 µs a record where a call of `desired_record` each took 1.5.
    """
    made = list(map(object.__new__, repeat(kind, count)))
    for setter, values in zip(setters, columns, strict=True):
        deque(map(setter, made, values), maxlen=0)
    return made


_CELL_REF_SLOTS = tuple(CellRef.__dict__[f.name].__set__ for f in dataclass_fields(CellRef))
