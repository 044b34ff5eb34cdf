"""What reading one block row by row is made of: where its cells are, each field compiled once,
and what a row gives.

`block_reader` reads a block with these; `column_builder` builds the rows that need no finding
column by column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from loader.findings import Finding
from loader.places import CellRef
from loader.source.mapping import FieldSpec
from loader.source.readers import SheetRow, column_letter
from loader.source.records import DesiredRecord, slotted_many


@dataclass(frozen=True)
class CellLayout:
    """Where each field of a block reads from: the same for every row."""

    file: str
    sheet: str | None
    columns: Mapping[str, int]  # field (or custom_attributes.<Label>) -> 0-based column


class RowCells(Mapping[str, CellRef]):
    """`DesiredRecord.cells` of one row, made on demand.

    Holding a CellRef per field per row cost about 3 KB a row (measured: 200,000 rows x 12
    fields); this holds a row number and a shared tuple of field names.
    """

    __slots__ = ("_layout", "_names", "_row")

    def __init__(self, layout: CellLayout, row: int, names: tuple[str, ...]):
        self._layout = layout
        self._row = row
        self._names = names

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return RowCells, (self._layout, self._row, self._names)  # pickled as its three values

    @staticmethod
    def many(layout: CellLayout, numbers: Sequence[int], names: tuple[str, ...]) -> list[RowCells]:
        """`RowCells(layout, number, names)` for each row number, made a slot at a time (`slotted_many`)."""
        return slotted_many(RowCells, _ROW_CELLS_SLOTS, len(numbers), (repeat(layout), numbers, repeat(names)))

    def __getitem__(self, name: str) -> CellRef:
        if name not in self._names:
            raise KeyError(name)
        column = self._layout.columns[name]
        return CellRef(self._layout.file, self._layout.sheet, f"{column_letter(column)}{self._row}", self._row)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"RowCells({ {name: str(self[name]) for name in self._names} })"


_ROW_CELLS_SLOTS = tuple(getattr(RowCells, name).__set__ for name in ("_layout", "_row", "_names"))


@dataclass(frozen=True)
class Built:
    """What one row gave for one variant: a record, or the errors that kept it from being one."""

    record: DesiredRecord | None
    errors: tuple[Finding, ...]  # warnings too, beside a record
    collected: Mapping[str, list[Any]] | None = None  # a `collect` field -> this row's items
    key: tuple[Any, ...] | None = None  # of a row with errors, when its key fields were built


@dataclass(frozen=True)
class FieldReader:
    """One field of a block, compiled once: what reading it does on every row."""

    spec: FieldSpec
    extract: Callable[[SheetRow], Any]
    column: int | None  # the cell's column; None for constants
    when: tuple[Callable[[SheetRow], bool], ...]
    convert: Callable[[Any], Any]  # the value steps (`compile_steps`)
    is_key: bool
    empty_list: bool  # an empty cell gives a field that keeps it [] (a list field), else None
    label: str | None  # the label of a custom attribute, else None
    gives_text: bool = False  # its value is always text that is not empty (`steps.gives_text`)

    def empty(self) -> list[Any] | None:
        """What an empty cell gives this field when the field is kept (`empty: clear`)."""
        return [] if self.empty_list else None


@dataclass(frozen=True)
class VariantReader:
    """How a row is read for one value of `repeat` (or the only way, without it)."""

    repeat: str | None
    accepts: tuple[Callable[[SheetRow], bool], ...]
    fields: tuple[FieldReader, ...]
    layout: CellLayout
