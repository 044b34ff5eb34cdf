"""The rows of a block that need no finding, built a column at a time.

Reading a block row by row (`BlockReader._build`) spends most of its time dispatching each field
of each row. Most rows hold nothing wrong, so `build_columns` runs each field's compiled steps
over its whole column (one `map`), then assembles the records from the columns. A row where
anything would need a finding (a step error, an empty key, an `empty: error` field left empty, a
value the schema refuses) comes back as None, for `_build` to read it and say what is wrong.
Both ways give the same records (tests/source/test_column_builder.py).

A block with `when:` or `collect:` fields is read row by row throughout (`can_build_columns`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from loader.findings import Finding
from loader.places import CellRef, row_place
from loader.source.block_rows import Built, FieldReader, RowCells, VariantReader
from loader.source.entity_schemas import ValueChecks
from loader.source.mapping import CUSTOM, FieldSpec
from loader.source.readers import WHITESPACE, SheetRow
from loader.source.records import DesiredRecord, Ref, desired_record
from loader.source.steps import EMPTY, StepError, plain_text, text_of

_ROW_BY_ROW: Final = object()  # a value whose row needs a finding
_LEFT_OUT: Final = object()  # an empty cell of an `empty: skip` field: the record has no such field


@dataclass(frozen=True)
class BlockContext:
    """What every record of a block shares."""

    block: str
    entity: str
    key: tuple[str, ...]
    pii: frozenset[str]
    checks: ValueChecks  # the schema's checks of one value
    shared: Callable[[tuple[str, ...]], tuple[str, ...]]  # one tuple object for equal tuples of names
    # warnings for fields a record's type does not take (the profile's `fields_by_type`), when it has such a rule
    not_taken: Callable[[Mapping[str, Any], RowCells, CellRef, str], tuple[Finding, ...]] | None


def can_build_columns(variant: VariantReader) -> bool:
    return all(not reader.when and not reader.spec.collect for reader in variant.fields)


def build_columns(rows: Sequence[SheetRow], variant: VariantReader,
                  context: BlockContext) -> list[DesiredRecord | Built | None]:
    """A record (or a record with warnings) per row, or None where the row needs a finding."""
    slow = [False] * len(rows)
    left_out = [False] * len(rows)
    columns = [_column(rows, reader, slow, left_out) for reader in variant.fields]
    checks = context.checks
    for reader, values in zip(variant.fields, columns, strict=True):
        if reader.gives_text and (checks.label_any_text if reader.label is not None
                                  else reader.spec.name in checks.any_text):
            continue  # text that is never empty: the schema takes every value this field can give
        check = checks.fields.get(reader.spec.name) if reader.label is None else checks.label
        _check_column(values, check, slow)
    ordered = [(reader.spec.name, reader.label, reader.column is not None, values)
               for reader, values in zip(variant.fields, columns, strict=True)]
    plain_names = tuple(name for name, label, _, _ in ordered if label is None)
    labels = tuple(label for _, label, _, _ in ordered if label is not None)
    nothing = [()] * len(rows)
    plain = list(zip(*(v for _, label, _, v in ordered if label is None), strict=True)) if plain_names else nothing
    labelled = list(zip(*(v for _, label, _, v in ordered if label is not None), strict=True)) if labels else nothing
    every_cell = context.shared(tuple(name for name, _, has_cell, _ in ordered if has_cell))
    shown = f" ({variant.repeat})" if variant.repeat else ""
    file, sheet, repeat_note = variant.layout.file, variant.layout.sheet, variant.repeat or ""
    layout, not_taken, shared = variant.layout, context.not_taken, context.shared
    block, entity, pii = context.block, context.entity, context.pii
    key_of = _key_getter(context.key)
    outcomes: list[DesiredRecord | Built | None] = []
    for j, (row, plain_values, label_values) in enumerate(zip(rows, plain, labelled, strict=True)):
        if slow[j]:
            outcomes.append(None)
            continue
        names = every_cell
        if left_out[j]:
            fields = {n: v for n, v in zip(plain_names, plain_values, strict=True) if v is not _LEFT_OUT}
            custom = {n: v for n, v in zip(labels, label_values, strict=True) if v is not _LEFT_OUT}
            names = shared(tuple(name for name, _, has_cell, values in ordered
                                 if has_cell and values[j] is not _LEFT_OUT))
        else:
            fields = dict(zip(plain_names, plain_values, strict=True))
            custom = dict(zip(labels, label_values, strict=True)) if labels else {}
        if custom:
            fields[CUSTOM] = custom
        number = row.number
        row_ref = row_place(file, sheet, number, repeat_note)
        cells = RowCells(layout, number, names)
        record = desired_record(block, entity, key_of(fields), fields, row_ref, cells, pii)
        warnings = not_taken(fields, cells, row_ref, shown) if not_taken is not None else ()
        outcomes.append(Built(record, warnings) if warnings else record)
    return outcomes


def _key_getter(key: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    if len(key) == 1:
        name = key[0]
        return lambda fields: (fields[name],)
    return lambda fields: tuple(fields[name] for name in key)


def _column(rows: Sequence[SheetRow], reader: FieldReader, slow: list[bool], left_out: list[bool]) -> list[Any]:
    """One field's values over the rows; `slow` set for the rows it cannot give a value without a finding,
    `left_out` for the rows without this field (an empty cell of an `empty: skip` field)."""
    index = reader.column
    if reader.spec.column is not None and index is not None:
        raw = [row.values[index] if index < len(row.values) else None for row in rows]
    else:
        extract = reader.extract
        raw = [extract(row) for row in rows]
    convert = reader.convert
    try:
        if convert is plain_text:  # the most common field, without a call for a cell of text
            values = [(v if v.strip(WHITESPACE) else EMPTY) if type(v) is str else plain_text(v) for v in raw]
        else:
            values = list(map(convert, raw))
    except StepError:
        values = [_converted(convert, value) for value in raw]
    spec = reader.spec
    # Looked for before the values become Refs, whose (dataclass) equality costs a call per value.
    special = _ROW_BY_ROW in values or EMPTY in values or (reader.is_key and (None in values or [] in values))
    if spec.ref is not None:
        values = _references(spec, values)
    must_have = reader.is_key or spec.empty == "error"
    if special:
        for j, value in enumerate(values):
            if value is _ROW_BY_ROW:
                slow[j] = True
            elif value is EMPTY:
                if must_have:
                    slow[j] = True
                else:
                    values[j] = _LEFT_OUT if spec.empty == "skip" else reader.empty()
                    left_out[j] = left_out[j] or spec.empty == "skip"
            elif reader.is_key and (value is None or value == []):
                slow[j] = True
    return values


def _check_column(values: list[Any], check: Callable[[Any], bool] | None, slow: list[bool]) -> None:
    """Set `slow` for the rows whose value the schema may refuse (None clears a field: never refused)."""
    if check is None:
        for j, value in enumerate(values):
            if value is not None and value is not _LEFT_OUT:
                slow[j] = True
        return
    if all(map(check, values)):
        return
    for j, value in enumerate(values):
        if value is not None and value is not _LEFT_OUT and not check(value):
            slow[j] = True


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
