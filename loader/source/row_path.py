"""One row of a block read the plain way: each field in turn, a finding for whatever is wrong.

This is the path every row can take, and the one that says what is wrong with a row;
`column_path` gives the same records for the rows that need no finding, faster.
No finding shows the value of a field marked `pii: true` (contract section 7).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from loader.findings import Finding
from loader.places import CellRef
from loader.record_fields import CUSTOM
from loader.source.block_rows import BlockContext, Built, FieldReader, RowCells, VariantReader
from loader.source.entity_schemas import check_fields
from loader.source.mapping import FieldSpec
from loader.source.patterns import PatternTimeout
from loader.source.readers import SheetRow
from loader.source.records import DesiredRecord, Ref, display_value
from loader.source.steps import EMPTY, StepError, text_of

_LEFT_OUT: Final = object()  # a field the record does not have (an empty cell of an `empty: skip` field)


def build_row(row: SheetRow, variant: VariantReader, context: BlockContext) -> Built:
    """The record one row gives for one variant, or the errors that keep it from being one."""
    fields: dict[str, Any] = {}
    custom: dict[str, Any] = {}
    with_cells: list[str] = []
    errors: list[Finding] = []
    collected: dict[str, list[Any]] | None = None
    shown = f" ({variant.repeat})" if variant.repeat else ""
    for reader in variant.fields:
        spec = reader.spec
        value = _field_value(row, reader, shown, context)
        if isinstance(value, Finding):
            errors.append(value)
            continue
        if value is _LEFT_OUT:
            continue
        if spec.collect:
            items = list(dict.fromkeys(value)) if isinstance(value, list | tuple) else [value]
            (collected := collected if collected is not None else {})[spec.name] = items
            value = gathered_value(spec, items)
        if reader.label is not None:
            custom[reader.label] = value
        else:
            fields[spec.name] = value
        if reader.column is not None:
            with_cells.append(spec.name)
    if custom:
        fields[CUSTOM] = custom
    row_ref = context.data.row_ref(row.number)
    if variant.repeat:
        row_ref = replace(row_ref, repeat=variant.repeat)
    record = row_ref.record  # its record's name, in a source that names records
    cells = RowCells(variant.layout, row.number, context.shared(tuple(with_cells)), record)
    if not errors and not context.valid(fields):
        errors = _schema_findings(variant, context, fields, cells, row_ref, shown)
    if errors:
        known = all(k in fields for k in context.key)
        key = tuple(fields.get(k) for k in context.key) if known else None
        return Built(None, _with_key(errors, key), key=key)
    key = tuple(fields[k] for k in context.key)
    warnings = not_taken(context, fields, cells, row_ref, shown)
    return Built(DesiredRecord(context.block, context.entity, key, fields, row_ref, cells, context.pii),
                 warnings, collected)


def _schema_findings(
    variant: VariantReader, context: BlockContext, fields: dict[str, Any], cells: RowCells, row_ref: CellRef,
    shown: str,
) -> list[Finding]:
    """A finding per way the record breaks the entity's schema, at the field's cell (else the row)."""
    rules = {r.spec.name: r.spec.place for r in variant.fields}
    errors: list[Finding] = []
    for problem in check_fields(context.profile, _without_cleared_labels(fields), context.pii):
        place = cells.get(problem.field) or row_ref
        name = f"{problem.field or 'record'}{shown}"
        errors.append(Finding("error", "schema", f"{name}: {problem.message}", place,
                              f"{name}: {problem.cause}" if problem.cause else "", rules.get(problem.field)))
    return errors


def _field_value(row: SheetRow, reader: FieldReader, shown: str, context: BlockContext) -> Any:
    """One field's value in one row; `_LEFT_OUT` where the record does not have it; a Finding
    where the row cannot give it."""
    spec = reader.spec
    try:
        raw = reader.extract(row) if not reader.when or all(test(row) for test in reader.when) else None
    except PatternTimeout as exc:
        return Finding("error", "bad-value", f"{spec.name}{shown}: when: {exc}", _where(row, reader, context),
                       rule=spec.place)
    try:
        value = reader.convert(raw)
    except StepError as exc:
        return Finding("error", "bad-value", f"{spec.name}{shown}: {exc}", _where(row, reader, context),
                       f"{spec.name}{shown}: {_said(exc)}", spec.place)
    if value is EMPTY:
        if reader.is_key:
            return _empty_key(row, reader, shown, context)
        if spec.empty == "skip":
            return _LEFT_OUT
        if spec.empty == "error":
            return Finding("error", "empty-value", f"{spec.name}{shown}: a value is required here "
                           "(the mapping says `empty: error`)", _where(row, reader, context), rule=spec.place)
        return reader.empty()
    if spec.ref is not None and value is not None:
        return _ref(spec, value, None if reader.column is None else context.data.cell(row.number, reader.column))
    if reader.is_key and (value is None or value == []):
        return _empty_key(row, reader, shown, context)
    return value


def _where(row: SheetRow, reader: FieldReader, context: BlockContext) -> CellRef:
    column = reader.column
    return context.data.cell(row.number, column) if column is not None else context.data.row_ref(row.number)


def _empty_key(row: SheetRow, reader: FieldReader, shown: str, context: BlockContext) -> Finding:
    return Finding("error", "empty-key", f"key field {reader.spec.name!r} is empty{shown}",
                   _where(row, reader, context), rule=reader.spec.place)


def _said(error: StepError) -> str:
    """What a step error says without the value found: "expected a whole number" (of "..., got 'ten'")."""
    return error.said.rstrip(" :,;").removesuffix(" got").rstrip(" :,;")


def _with_key(errors: list[Finding], key: tuple[Any, ...] | None) -> tuple[Finding, ...]:
    """The row's errors, each naming the row's key where its key fields were read (shown beside the cell)."""
    shown = key_text(key)
    return tuple(replace(f, key=shown) for f in errors) if shown else tuple(errors)


def key_text(key: tuple[Any, ...] | None) -> str:
    """A key as reports name a record: its values joined by '/' ("" when unknown or empty)."""
    if key is None or all(v is None for v in key):
        return ""
    return "/".join(text_of(display_value(v)) for v in key)


def not_taken(context: BlockContext, fields: Mapping[str, Any], cells: RowCells, row_ref: CellRef,
              shown: str) -> tuple[Finding, ...]:
    """Warnings for fields this record's type does not take (the profile's `fields_by_type`)."""
    entity, rule = context.profile, context.profile.fields_by_type
    if rule is None:
        return ()
    kind = fields.get(rule.field)
    takes = rule.types.get(kind) if isinstance(kind, str) else None
    if takes is None:
        return ()
    return tuple(
        Finding("warning", "field-not-taken",
                f"{name}{shown}: a {entity.name} of {rule.field} {kind} does not take {name} (it takes "
                f"{', '.join(sorted(takes)) or 'none of them'}); the value is sent as read — leave it out for "
                f"such rows with `when: {{column: ..., not_equals: ...}}`",
                cells.get(name) or row_ref)
        for name in fields
        if name in rule.specific and name not in takes and fields[name] not in (None, "", [], ())
    )


def _ref(spec: FieldSpec, value: Any, cell: CellRef | None) -> Ref | tuple[Ref, ...]:
    """The Refs of a reference field. Only a `collect` field's Refs name their cell: the record
    names every other field's cell (`DesiredRecord.place`), and a collected item may come from
    another row."""
    assert spec.ref is not None
    cell = cell if spec.collect else None
    if isinstance(value, list):
        return tuple(Ref(spec.ref, (text_of(v),), spec.by, cell) for v in value)
    return Ref(spec.ref, (text_of(value),), spec.by, cell)


def gathered_value(spec: FieldSpec, items: list[Any]) -> Any:
    """A `collect` field's value from its items: a list (a tuple of Refs), or the items joined."""
    kept = [v for v in items if v is not None]
    if spec.collect == "join":
        return spec.separator.join(text_of(display_value(v)) for v in kept)
    return tuple(kept) if spec.ref else kept


def _without_cleared_labels(fields: dict[str, Any]) -> dict[str, Any]:
    custom = fields.get(CUSTOM)
    if not custom or all(v is not None for v in custom.values()):
        return fields
    return {**fields, CUSTOM: {k: v for k, v in custom.items() if v is not None}}
