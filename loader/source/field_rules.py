"""The mapping line that sets each field of a block, as reports name it: `mappings/units.yaml:31` and
`name ← column 'Unit Name'`. Reports group a block's changes by these lines (contract section 7)."""

from __future__ import annotations

from loader.source.mapping import Block, FieldSpec


def field_rules(block: Block) -> tuple[tuple[str, str, str], ...]:
    """(field, "file:line", what the line says) for each field the block sets, in mapping order.

    A block with `repeat` sets a field from one line for every value: the first value's text names it.
    """
    rules: dict[str, tuple[str, str, str]] = {}
    for variant in block.variants:
        for spec in variant.fields:
            rules.setdefault(spec.name, (spec.name, f"{spec.place.file}:{spec.place.line}", rule_text(spec)))
    return tuple(rules.values())


def rule_text(spec: FieldSpec) -> str:
    """`name ← column 'Unit Name'`, `parent ← school by column 'School Code'`, `status ← value 'ACTIVE'`."""
    if spec.column is not None:
        origin = f"column {spec.column!r}"
    elif spec.template:
        text = "".join("{" + part + "}" if is_column else part for part, is_column in spec.template)
        origin = f"template {text!r}"
    elif spec.has_value:
        origin = f"value {spec.value!r}"
    else:
        origin = "its default"
    if spec.lookup is not None:
        origin += " looked up" + (f" in sheet {spec.lookup.sheet!r}" if spec.lookup.sheet else "")
    if spec.ref:
        origin = f"{spec.ref} by {origin}"
    return f"{spec.name} ← {origin}" + (" (when …)" if spec.when else "")
