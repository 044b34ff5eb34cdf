"""What reading one block is made of: where its cells are, each field compiled once
(`field_readers`), what every row of the block shares, and what a row gives.

`block_reader` reads a block with these: each row by `row_path`, or the rows that need no
finding a column at a time by `column_path`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from loader.findings import Finding
from loader.places import CellRef
from loader.profile import EntityProfile
from loader.source.entity_schemas import ValueChecks
from loader.source.mapping import FieldSpec
from loader.source.readers import SheetData, SheetRow, column_letter
from loader.source.records import DesiredRecord


@dataclass(frozen=True)
class CellLayout:
    """Where each field of a block reads from: the same for every row."""

    file: str
    sheet: str | None
    columns: Mapping[str, int]  # field (or custom_attributes.<Label>) -> 0-based column
    by_record: bool = False  # a source that names records, not rows (`SheetData.records`)
    names: tuple[str, ...] = ()  # and its columns' names


class RowCells(Mapping[str, CellRef]):
    """`DesiredRecord.cells` of one row, made on demand.

    Holding a CellRef per field per row cost about 3 KB a row (measured: 200,000 rows x 12
    fields); this holds a row number and a shared tuple of field names.
    """

    __slots__ = ("_layout", "_names", "_record", "_row")

    def __init__(self, layout: CellLayout, row: int, names: tuple[str, ...], record: str | None = None):
        self._layout = layout
        self._row = row
        self._names = names
        self._record = record  # its record's name, in a source that names records (`CellLayout.by_record`)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return RowCells, (self._layout, self._row, self._names, self._record)  # pickled as its values

    @property
    def layout(self) -> CellLayout:
        return self._layout

    @property
    def number(self) -> int:
        """Its row's number."""
        return self._row

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    def __getitem__(self, name: str) -> CellRef:
        if name not in self._names:
            raise KeyError(name)
        layout = self._layout
        column = layout.columns[name]
        if layout.by_record:
            shown = layout.names[column] if column < len(layout.names) else column_letter(column)
            return CellRef(layout.file, None, shown, self._row, record=self._record or f"record {self._row - 1}")
        return CellRef(layout.file, layout.sheet, f"{column_letter(column)}{self._row}", self._row)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"RowCells({ {name: str(self[name]) for name in self._names} })"


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


@dataclass(frozen=True)
class BlockContext:
    """What every row of a block shares, read by either path."""

    block: str
    entity: str
    key: tuple[str, ...]
    pii: frozenset[str]
    profile: EntityProfile  # the entity's
    checks: ValueChecks  # the schema's checks of one value
    valid: Callable[[Mapping[str, Any]], bool]  # True when the schema takes a record's fields
    data: SheetData
    shared: Callable[[tuple[str, ...]], tuple[str, ...]]  # one tuple object for equal tuples of names


@dataclass(frozen=True)
class LeftOut:
    """A row that errors kept from becoming a record: its key where the key cells were readable.

    The planner reports a live record with this key as blocked, not as "not in source".
    """

    row: CellRef
    key: tuple[Any, ...] | None
    errors: tuple[Finding, ...]
