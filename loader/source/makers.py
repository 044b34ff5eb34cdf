"""The fast constructors of reading: the values of `records` and `block_rows`, made a column at a time.

Reading makes a record per row, so the ordinary constructors' cost counts: a frozen dataclass's
__init__ sets each field through object.__setattr__ (1.8 µs a record). Here each slot is set over
a whole column by one `map` (no Python frame per record): 0.9 µs a record. The values made are
the ones the constructors make (tests/source/test_source_makers.py holds them equal).

Records are pickled (the reading child sends every record) as the values of their slots, made
again by setting them: the slotted dataclass's own __setstate__ took twice the time to unpickle.
A record's cells (`RowCells`) travel as their layout and names, and take the row's number again.
"""

from __future__ import annotations

import copyreg
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields as dataclass_fields
from itertools import repeat
from operator import setitem
from typing import Any, TypeVar

from loader.places import CellRef
from loader.record_fields import CUSTOM
from loader.source.block_rows import CellLayout, RowCells
from loader.source.records import DesiredRecord, Ref

_T = TypeVar("_T")


def slotted_many(kind: type[_T], setters: Sequence[Callable[[_T, Any], None]], count: int,
                 columns: Iterable[Iterable[Any]]) -> list[_T]:
    """`count` new instances of a slotted class, slot k of the i-th set to the i-th value of columns[k].

    Every slot must be given a column (an unset slot raises AttributeError when read).
    """
    made = list(map(object.__new__, repeat(kind, count)))
    for setter, values in zip(setters, columns, strict=True):
        deque(map(setter, made, values), maxlen=0)
    return made


def _setters(kind: type[Any]) -> tuple[Callable[[Any, Any], None], ...]:
    """One slot setter per field of a slotted dataclass, in field order."""
    return tuple(kind.__dict__[f.name].__set__ for f in dataclass_fields(kind))


_DESIRED_SLOTS = _setters(DesiredRecord)
_CELL_REF_SLOTS = _setters(CellRef)
_ROW_CELLS_SLOTS = tuple(getattr(RowCells, name).__set__ for name in ("_layout", "_row", "_names"))


def desired_record(
    block: str, entity: str, key: tuple[Any, ...], fields: Mapping[str, Any], row: CellRef,
    cells: Mapping[str, CellRef], pii: frozenset[str], /,
) -> DesiredRecord:
    """DesiredRecord(block, entity, key, fields, row, cells, pii), its slots set directly."""
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


def desired_records(
    block: str, entity: str, keys: Sequence[tuple[Any, ...]], fields: Sequence[Mapping[str, Any]],
    rows: Sequence[CellRef], cells: Sequence[Mapping[str, CellRef]], pii: frozenset[str],
) -> list[DesiredRecord]:
    """`desired_record` over columns: the i-th record of keys[i], fields[i], rows[i], cells[i] (of one length)."""
    return slotted_many(DesiredRecord, _DESIRED_SLOTS, len(keys),
                        (repeat(block), repeat(entity), keys, fields, rows, cells, repeat(pii), repeat(())))


def row_places(file: str, sheet: str | None, numbers: Sequence[int], repeat_note: str = "") -> list[CellRef]:
    """The CellRef of each row (`SheetData.row_ref`, with a `repeat` note) over a column of row numbers."""
    return slotted_many(CellRef, _CELL_REF_SLOTS, len(numbers),
                        (repeat(file), repeat(sheet), repeat(None), numbers, repeat(repeat_note)))


def row_cells(layout: CellLayout, numbers: Sequence[int], names: tuple[str, ...]) -> list[RowCells]:
    """`RowCells(layout, number, names)` for each row number."""
    return slotted_many(RowCells, _ROW_CELLS_SLOTS, len(numbers), (repeat(layout), numbers, repeat(names)))


def fields_by_row(count: int, plain: Sequence[tuple[str, Sequence[Any]]],
                  labelled: Sequence[tuple[str, Sequence[Any]]]) -> list[dict[str, Any]]:
    """Each row's fields from the fields' columns: {name: value, ..., CUSTOM: {label: value, ...}}."""
    if labelled:
        return _dicts(count, [*plain, (CUSTOM, _dicts(count, labelled))])
    return _dicts(count, plain)


def _dicts(count: int, columns: Sequence[tuple[str, Sequence[Any]]]) -> list[dict[str, Any]]:
    """A dict per row: a copy of one holding every key (a copy of a dict is one block copied, and
    setting a key it holds never grows it), each key then set over the rows by one `map` of
    `operator.setitem` (a builtin called without an argument tuple; `dict.__setitem__` is a slot
    wrapper, called with one). 50,000 rows of 6 fields: 0.52 µs a row, where a dict display written
    out for the block's fields (made and run by `exec`) took 0.48 and `dict(zip(names, row))` 1.2."""
    made = list(map(dict.copy, repeat(dict.fromkeys(name for name, _ in columns), count)))
    for name, values in columns:
        deque(map(setitem, made, repeat(name), values), maxlen=0)
    return made


def _pickled_desired(record: DesiredRecord) -> tuple[Any, tuple[Any, ...]]:
    cells, row = record.cells, record.row
    if type(cells) is RowCells and cells.number == row.row and type(row.row) is int:
        # its cells made again on the row's own number: pickle keeps one object of the row but not of
        # an int, so its cells would hold a copy of the number (32 bytes a record)
        return _desired_of_row, (record.block, record.entity, record.key, record.fields, row, cells.layout,
                                 cells.names, record.pii, record.also_rows)
    return _desired_from_slots, (record.block, record.entity, record.key, record.fields, row, cells,
                                 record.pii, record.also_rows)


def _desired_of_row(
    block: str, entity: str, key: tuple[Any, ...], fields: Mapping[str, Any], row: CellRef, layout: CellLayout,
    names: tuple[str, ...], pii: frozenset[str], also_rows: tuple[tuple[str, CellRef], ...], /,
) -> DesiredRecord:
    """The record `_pickled_desired` sent, its cells `RowCells(layout, row.row, names)`."""
    cells = object.__new__(RowCells)
    put = _ROW_CELLS_SLOTS
    put[0](cells, layout), put[1](cells, row.row), put[2](cells, names)
    return _desired_from_slots(block, entity, key, fields, row, cells, pii, also_rows)


def _pickled_ref(ref: Ref) -> tuple[Any, tuple[Any, ...]]:
    return Ref, (ref.entity, ref.values, ref.by, ref.cell)


copyreg.pickle(DesiredRecord, _pickled_desired)
copyreg.pickle(Ref, _pickled_ref)
