"""A block's mapping compiled against its sheet's header: each `where`/`when` test and each field
made once into what reading it does on every row. Both ways of reading rows (`row_path`,
`column_path`) read the same FieldReaders.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from loader.record_fields import CUSTOM
from loader.source.block_rows import CellLayout, FieldReader, VariantReader
from loader.source.mapping import Block, Condition, FieldSpec
from loader.source.patterns import search
from loader.source.readers import WHITESPACE, CellValue, SheetData, SheetRow, is_blank
from loader.source.steps import compile_steps, gives_text, text_of


def variant_readers(block: Block, columns: Mapping[str, int], data: SheetData) -> tuple[VariantReader, ...]:
    """How each row of the block is read: one VariantReader per `repeat` value, or the only one."""
    key_set = frozenset(block.key)
    every_field = cell_layout(block.fields, columns, data)
    return tuple(
        VariantReader(
            variant.repeat,
            tuple(condition_test(c, columns) for c in variant.where),
            tuple(field_reader(spec, columns, key_set) for spec in variant.fields),
            cell_layout(variant.fields, columns, data) if block.repeats else every_field,
        )
        for variant in block.variants
    )


def cell_layout(fields: tuple[FieldSpec, ...], columns: Mapping[str, int], data: SheetData) -> CellLayout:
    """Where each field read from a cell is: a column's, or a template's first column."""
    return CellLayout(data.file, data.sheet, {
        s.name: columns[s.columns[0]] for s in fields if not s.has_value and s.columns[0] in columns
    }, data.records is not None, data.names)


def _cell_text(value: CellValue) -> str:
    return "" if value is None else text_of(value).strip(WHITESPACE)


def condition_test(condition: Condition, columns: Mapping[str, int]) -> Callable[[SheetRow], bool]:
    """A `where` (or `when`) test of a row. Raises PatternTimeout where a `matches` ran out of time."""
    index = columns[condition.column]
    op, values, pattern = condition.op, set(condition.values), condition.pattern
    # A boolean cell reads "TRUE"/"FALSE" (as Excel shows it); `equals: true` means the same.
    values |= {v.upper() for v in values if v.lower() in ("true", "false")}

    def text(row: SheetRow) -> str:
        return _cell_text(row.values[index]) if index < len(row.values) else ""

    tests: dict[str, Callable[[SheetRow], bool]] = {
        "equals": lambda row: text(row) in values,
        "in": lambda row: text(row) in values,
        "not_equals": lambda row: text(row) not in values,
        "not_in": lambda row: text(row) not in values,
        "empty": lambda row: text(row) == "",
        "not_empty": lambda row: text(row) != "",
        "matches": lambda row: pattern is not None and search(pattern, text(row)),
    }
    return tests[op]


def _extractor(spec: FieldSpec, columns: Mapping[str, int]) -> Callable[[SheetRow], Any]:
    if spec.has_value:
        return lambda row: spec.value
    if spec.column is not None:
        index = columns[spec.column]
        return lambda row: row.values[index] if index < len(row.values) else None
    parts = [(text, columns[text] if is_column else -1) for text, is_column in spec.template]

    def render(row: SheetRow) -> Any:
        values = [row.values[i] if 0 <= i < len(row.values) else None for _, i in parts]
        if all(is_blank(v) for (_, i), v in zip(parts, values, strict=True) if i >= 0):
            return None
        return "".join(t if i < 0 else ("" if is_blank(v) else text_of(v))
                       for (t, i), v in zip(parts, values, strict=True))

    return render


def field_reader(spec: FieldSpec, columns: Mapping[str, int], key: frozenset[str]) -> FieldReader:
    """One field compiled: where its value comes from, its tests, its value steps."""
    return FieldReader(
        spec, _extractor(spec, columns),
        None if spec.has_value else columns[spec.columns[0]],  # a constant has no cell
        tuple(condition_test(c, columns) for c in spec.when),
        compile_steps(spec.steps, pii=spec.pii), spec.name in key,
        spec.steps.split is not None or spec.steps.type == "list",
        spec.name[len(CUSTOM) + 1:] if spec.name.startswith(CUSTOM + ".") else None,
        gives_text(spec.steps),
    )
