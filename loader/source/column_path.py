"""The rows of a block that need no finding, built a column at a time.

Reading a block row by row (`row_path.build_row`) spends most of its time dispatching each field
of each row. Most rows hold nothing wrong, so `build_columns` runs each field's compiled steps
over its whole column (one `map`), then assembles the records from the columns. A row where
anything would need a finding (a step error, an empty key, an `empty: error` field left empty, a
value the schema refuses) comes back as None, for `build_row` to read it and say what is wrong.
Both ways read the same compiled fields (`field_readers`) and give the same records
(tests/source/test_column_path.py).

A block with `when:` or `collect:` fields is read row by row throughout (`can_build_columns`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from operator import itemgetter
from typing import Any, Final, cast

from loader.places import CellRef
from loader.record_fields import CUSTOM
from loader.source.block_rows import BlockContext, Built, CellLayout, FieldReader, RowCells, VariantReader
from loader.source.makers import desired_record, desired_records, fields_by_row, row_cells, row_places
from loader.source.mapping import FieldSpec
from loader.source.readers import WHITESPACE, CellValue, SheetRow
from loader.source.readers.rows import blank_texts
from loader.source.records import DesiredRecord, Ref
from loader.source.row_path import not_taken
from loader.source.steps import EMPTY, StepError, plain_text, text_of

_ROW_BY_ROW: Final = object()  # a value whose row needs a finding
_LEFT_OUT: Final = object()  # an empty cell of an `empty: skip` field: the record has no such field


def can_build_columns(variant: VariantReader) -> bool:
    return all(not reader.when and not reader.spec.collect for reader in variant.fields)


def build_columns(rows: Sequence[SheetRow], variant: VariantReader,
                  context: BlockContext) -> list[DesiredRecord | Built | None]:
    """A record (or a record with warnings) per row, or None where the row needs a finding."""
    slow = [False] * len(rows)
    left_out = [False] * len(rows)
    cells = list(map(_VALUES, rows))
    shortest = min(map(len, cells), default=0)
    columns = [_column(rows, _Cells(cells, shortest), reader, slow, left_out) for reader in variant.fields]
    checks = context.checks
    for reader, values in zip(variant.fields, columns, strict=True):
        if reader.gives_text and (checks.label_any_text if reader.label is not None
                                  else reader.spec.name in checks.any_text):
            continue  # text that is never empty: the schema takes every value this field can give
        check = checks.fields.get(reader.spec.name) if reader.label is None else checks.label
        _check_column(values, check, slow)
    return _records(rows, variant, context, columns, slow, left_out)


def _records(rows: Sequence[SheetRow], variant: VariantReader, context: BlockContext, columns: list[list[Any]],
             slow: list[bool], left_out: list[bool]) -> list[DesiredRecord | Built | None]:
    """The records of the rows from their fields' columns, made a column at a time: every dict of
    fields by one comprehension, every object a slot at a time (`makers`). Rows that
    need a finding give None; rows missing an `empty: skip` field are made again one by one.

    100,000 rows (the benchmark's sheets): 5.0 µs a row made one by one, 2.6 made by columns."""
    readers = variant.fields
    plain, labelled = _by_label(readers, columns)
    every_cell = context.shared(tuple(reader.spec.name for reader in readers if reader.column is not None))
    numbers: list[int] = list(map(itemgetter(0), rows))
    fields = fields_by_row(len(rows), plain, labelled)
    keys = _keys(context.key, plain)
    layout = variant.layout
    row_refs = _row_refs(variant, context, numbers)
    cells = row_cells(layout, numbers, every_cell, [r.record for r in row_refs] if layout.by_record else None)
    outcomes: list[DesiredRecord | Built | None] = [*desired_records(
        context.block, context.entity, keys, fields, row_refs, cells, context.pii)]
    if True in left_out:
        for j in [j for j, (out, hard) in enumerate(zip(left_out, slow, strict=True)) if out and not hard]:
            cells[j], outcomes[j] = _without_left_out(j, readers, columns, context, numbers[j], row_refs[j], layout)
    if True in slow:
        for j in [j for j, hard in enumerate(slow) if hard]:
            outcomes[j] = None
    if context.profile.fields_by_type is not None:
        _with_not_taken(outcomes, cells, row_refs, context, f" ({variant.repeat})" if variant.repeat else "")
    return outcomes


def _by_label(readers: Sequence[FieldReader], columns: list[list[Any]]
              ) -> tuple[list[tuple[str, list[Any]]], list[tuple[str, list[Any]]]]:
    """The columns of the entity's own fields (by field name) and of its custom attributes (by label)."""
    plain = [(reader.spec.name, values) for reader, values in zip(readers, columns, strict=True)
             if reader.label is None]
    labelled = [(reader.label, values) for reader, values in zip(readers, columns, strict=True)
                if reader.label is not None]
    return plain, labelled


def _row_refs(variant: VariantReader, context: BlockContext, numbers: list[int]) -> list[CellRef]:
    """The place of each row: its sheet row, or the record it was read from where the layout is by record."""
    layout = variant.layout
    return (row_places(layout.file, layout.sheet, numbers, variant.repeat or "") if not layout.by_record
            else [replace(context.data.row_ref(n), repeat=variant.repeat or "") for n in numbers])


def _keys(key: tuple[str, ...], plain: list[tuple[str, list[Any]]]) -> list[tuple[Any, ...]]:
    """Each row's key: the key fields' columns zipped (the mapping maps every key field, and a key
    field is never left out: an empty one needs a finding)."""
    by_name = dict(plain)
    return list(zip(*(by_name[name] for name in key), strict=True))


def _without_left_out(j: int, readers: Sequence[FieldReader], columns: list[list[Any]], context: BlockContext,
                      number: int, row_ref: CellRef, layout: CellLayout) -> tuple[RowCells, DesiredRecord]:
    """The cells and record of row `j`, which lacks a field (an empty cell of an `empty: skip` field)."""
    kept = [(reader, values[j]) for reader, values in zip(readers, columns, strict=True) if values[j] is not _LEFT_OUT]
    fields = {reader.spec.name: value for reader, value in kept if reader.label is None}
    custom = {reader.label: value for reader, value in kept if reader.label is not None}
    if custom:
        fields[CUSTOM] = custom
    names = context.shared(tuple(reader.spec.name for reader, _ in kept if reader.column is not None))
    cells = RowCells(layout, number, names, row_ref.record)
    return cells, desired_record(context.block, context.entity, _key_getter(context.key)(fields), fields, row_ref,
                                 cells, context.pii)


def _with_not_taken(outcomes: list[DesiredRecord | Built | None], cells: list[RowCells], row_refs: list[CellRef],
                    context: BlockContext, shown: str) -> None:
    """Each record with the warnings for the fields its type does not take, where it has any."""
    for j, record in enumerate(outcomes):
        if isinstance(record, DesiredRecord):
            warnings = not_taken(context, record.fields, cells[j], row_refs[j], shown)
            if warnings:
                outcomes[j] = Built(record, warnings)


def _key_getter(key: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    if len(key) == 1:
        name = key[0]
        return lambda fields: (fields[name],)
    return lambda fields: tuple(fields[name] for name in key)


_VALUES = itemgetter(1)  # a SheetRow's values


@dataclass(frozen=True)
class _Cells:
    """The values of the rows, and the length of the shortest (a row ends at its last non-empty cell)."""

    rows: list[tuple[CellValue, ...]]
    shortest: int

    def column(self, index: int) -> list[CellValue]:
        """The cells of one column (None past a row's end). A column every row reaches is taken by
        one `map` of an itemgetter: 3 ms for 100,000 rows where the comprehension took 9."""
        if index < self.shortest:
            return list(map(itemgetter(index), self.rows))
        return [values[index] if index < len(values) else None for values in self.rows]


def _column(rows: Sequence[SheetRow], cells: _Cells, reader: FieldReader, slow: list[bool],
            left_out: list[bool]) -> list[Any]:
    """One field's values over the rows; `slow` set for the rows it cannot give a value without a finding,
    `left_out` for the rows without this field (an empty cell of an `empty: skip` field)."""
    values, special = _converted_column(reader, _raw_column(rows, cells, reader))
    if reader.spec.ref is not None:
        values = _references(reader.spec, values)
    if special:
        _mark_rows(values, reader, slow, left_out)
    return values


def _raw_column(rows: Sequence[SheetRow], cells: _Cells, reader: FieldReader) -> list[Any]:
    """The field's cells (or what its `extract` takes from each row) before its steps."""
    index = reader.column
    if reader.spec.column is not None and index is not None:
        return cells.column(index)
    extract = reader.extract
    return [extract(row) for row in rows]


def _converted_column(reader: FieldReader, raw: list[Any]) -> tuple[list[Any], bool]:
    """The field's values after its steps, and whether any row needs `_mark_rows`: a value its steps
    refuse, an empty cell, an empty key. Looked for before the values become Refs, whose (dataclass)
    equality costs a call per value."""
    convert = reader.convert
    if convert is plain_text and set(map(type, raw)) == {str}:
        # A column of text: taken as it is, but for its blank cells (EMPTY: the only special it holds).
        return _texts(cast(list[str], raw))
    try:
        if convert is plain_text:  # the most common field, without a call for a cell of text
            values = [(v if v.strip(WHITESPACE) else EMPTY) if type(v) is str else plain_text(v) for v in raw]
        else:
            values = list(map(convert, raw))
    except StepError:
        values = [_converted(convert, value) for value in raw]
    special = _ROW_BY_ROW in values or EMPTY in values or (reader.is_key and (None in values or [] in values))
    return values, special


def _mark_rows(values: list[Any], reader: FieldReader, slow: list[bool], left_out: list[bool]) -> None:
    """Set `slow` for the rows only the row path can give (a refused value, an empty key or required
    field); any other empty cell becomes the field's empty value, or `_LEFT_OUT` under `empty: skip`."""
    must_have = reader.is_key or reader.spec.empty == "error"
    skip = reader.spec.empty == "skip"
    for j, value in enumerate(values):
        if value is _ROW_BY_ROW:
            slow[j] = True
        elif value is EMPTY:
            if must_have:
                slow[j] = True
            elif skip:
                values[j] = _LEFT_OUT
                left_out[j] = True
            else:
                values[j] = reader.empty()
        elif reader.is_key and (value is None or value == []):
            slow[j] = True


def _texts(raw: list[str]) -> tuple[list[Any], bool]:
    """`plain_text` of each cell of a column of text, and whether any was blank: the texts as they
    are but EMPTY for the blank ones, found by one search (100,000 cells in 5 ms where a test of
    each took 12)."""
    values: list[Any] = list(raw)
    blank = blank_texts(raw)
    for j in blank:
        values[j] = EMPTY
    return values, bool(blank)


def _check_column(values: list[Any], check: Callable[[Any], bool] | None, slow: list[bool]) -> None:
    """Set `slow` for the rows whose value the schema may refuse (None clears a field: never refused)."""
    if check is None:
        for j, value in enumerate(values):
            if value is not None and value is not _LEFT_OUT:
                slow[j] = True
        return
    if all(map(check, _distinct(values))):
        return
    for j, value in enumerate(values):
        if value is not None and value is not _LEFT_OUT and not check(value):
            slow[j] = True


def _distinct(values: list[Any]) -> Iterable[Any]:
    """The values a column's check must see: a check gives one answer for equal values, so each text
    (or list of texts) once. Only texts are taken as equal by value: 1, 1.0 and True are equal but a
    schema may take one and refuse another; other values are all checked (making each distinct
    object once cost more than the check of a Ref). A `type` column of 15,000 cells was checked in
    16 ms, each of its few texts once in 2; a list column of 25,000 in 27 ms, by distinct lists in 16."""
    kinds = set(map(type, values))
    if kinds == {str}:
        return dict.fromkeys(values)
    if kinds == {list} and set(map(type, chain.from_iterable(values))) <= {str}:
        return dict(zip(map(tuple, values), values, strict=True)).values()
    return values


def _converted(convert: Callable[[Any], Any], value: Any) -> Any:
    try:
        return convert(value)
    except StepError:
        return _ROW_BY_ROW


def _references(spec: FieldSpec, values: list[Any]) -> list[Any]:
    """A reference field's values as Refs; rows naming the same record share one Ref (they are
    immutable). A Ref's cell is the field's cell, which the record names (`DesiredRecord.place`),
    so a Ref here holds none."""
    assert spec.ref is not None
    entity, by = spec.ref, spec.by
    if set(map(type, values)) == {str}:  # a column of texts: one Ref made per text, the column by one map
        one_each = {text: Ref(entity, (text,), by) for text in dict.fromkeys(values)}
        return list(map(one_each.__getitem__, values))
    made: dict[str, Ref] = {}

    def one(value: Any) -> Ref:
        text = text_of(value)
        ref = made.get(text)
        if ref is None:
            ref = made[text] = Ref(entity, (text,), by)
        return ref

    return [v if v is None or v is EMPTY or v is _ROW_BY_ROW
            else tuple(one(item) for item in v) if isinstance(v, list) else one(v)
            for v in values]
