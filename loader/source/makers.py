"""The values of reading made a column at a time: records, row places and row cells.

Reading makes a record per row; these take a block's columns and make each value with its own
constructor, and each row's fields dict from the fields' columns.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import setitem
from typing import Any

from loader.places import CellRef
from loader.record_fields import CUSTOM
from loader.source.block_rows import CellLayout, RowCells
from loader.source.records import DesiredRecord


def desired_record(
    block: str, entity: str, key: tuple[Any, ...], fields: Mapping[str, Any], row: CellRef,
    cells: Mapping[str, CellRef], pii: frozenset[str], /,
) -> DesiredRecord:
    """DesiredRecord(block, entity, key, fields, row, cells, pii)."""
    return DesiredRecord(block, entity, key, fields, row, cells, pii)


def desired_records(
    block: str, entity: str, keys: Sequence[tuple[Any, ...]], fields: Sequence[Mapping[str, Any]],
    rows: Sequence[CellRef], cells: Sequence[Mapping[str, CellRef]], pii: frozenset[str],
) -> list[DesiredRecord]:
    """`desired_record` over columns: the i-th record of keys[i], fields[i], rows[i], cells[i] (of one length)."""
    return list(map(DesiredRecord, repeat(block), repeat(entity), keys, fields, rows, cells, repeat(pii)))


def row_places(file: str, sheet: str | None, numbers: Sequence[int], repeat_note: str = "") -> list[CellRef]:
    """The CellRef of each row (`SheetData.row_ref`, with a `repeat` note) over a column of row numbers."""
    return list(map(CellRef, repeat(file), repeat(sheet), repeat(None), numbers, repeat(repeat_note)))


def row_cells(layout: CellLayout, numbers: Sequence[int], names: tuple[str, ...],
              records: Sequence[str | None] | None = None) -> list[RowCells]:
    """`RowCells(layout, number, names, record)` for each row number (`records`: their record names,
    in a source that names records)."""
    if records is None:
        return list(map(RowCells, repeat(layout), numbers, repeat(names)))
    return list(map(RowCells, repeat(layout), numbers, repeat(names), records))


def fields_by_row(count: int, plain: Sequence[tuple[str, Sequence[Any]]],
                  labelled: Sequence[tuple[str, Sequence[Any]]]) -> list[dict[str, Any]]:
    """Each row's fields from the fields' columns: {name: value, ..., CUSTOM: {label: value, ...}}."""
    if labelled:
        return _dicts(count, [*plain, (CUSTOM, _dicts(count, labelled))])
    return _dicts(count, plain)


def _dicts(count: int, columns: Sequence[tuple[str, Sequence[Any]]]) -> list[dict[str, Any]]:
    """A dict per row: a copy of one holding every key (setting a key it holds never grows it), each
    key then set over the rows by one `map` of `operator.setitem`."""
    made = list(map(dict.copy, repeat(dict.fromkeys(name for name, _ in columns), count)))
    for name, values in columns:
        deque(map(setitem, made, repeat(name), values), maxlen=0)
    return made
