"""`lookup:` tables: a two-column table in another sheet or file, read once, put into the field's steps.

The table's header is the first row near the top holding both columns (`find_header_row`). Keys
are the key column's text, stripped; the first row of a repeated key wins. Problems (a file,
sheet or column that is not there) are findings at the `lookup:` in the mapping.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from loader.findings import Finding
from loader.places import Place
from loader.source.headers import Header, find_header_row
from loader.source.mapping import Block, FieldSpec, LookupSpec, Variant
from loader.source.readers import WHITESPACE, SheetData, Source, is_blank
from loader.source.steps import text_of

ReadSheet = Callable[[Source, str | None, Place], SheetData | None]  # (source, sheet, place) -> rows, or None


def lookup_sources(block: Block) -> list[Source]:
    """The sources a block's lookups and its `renamed:` crosswalk read other than the block's own
    (for the plan's fingerprints)."""
    crosswalk = block.renamed.crosswalk if block.renamed is not None else None
    return [s.lookup.source for s in _specs(block) if s.lookup and s.lookup.source] + (
        [crosswalk.source] if crosswalk is not None else [])


def with_lookups(block: Block, read_sheet: ReadSheet, findings: list[Finding]) -> Block | None:
    """`block` with each lookup's table in its field's steps; None (findings added) when one cannot be read."""
    if not any(s.lookup for s in _specs(block)):
        return block
    tables: dict[LookupSpec, tuple[dict[str, Any], str] | None] = {}
    for spec in _specs(block):
        if spec.lookup is not None and spec.lookup not in tables:
            tables[spec.lookup] = _table(spec.lookup, block, read_sheet, findings)
    if any(t is None for t in tables.values()):
        return None

    def filled(spec: FieldSpec) -> FieldSpec:
        found = tables.get(spec.lookup) if spec.lookup else None
        if found is None:
            return spec
        table, name = found
        return replace(spec, steps=replace(spec.steps, lookup=table, lookup_name=name))

    repeats = tuple(Variant(v.repeat, tuple(map(filled, v.fields)), v.where) for v in block.repeats)
    return replace(block, fields=tuple(map(filled, block.fields)), repeats=repeats)


def _specs(block: Block) -> list[FieldSpec]:
    return [s for v in block.variants for s in v.fields]


def _table(lookup: LookupSpec, block: Block, read_sheet: ReadSheet,
           findings: list[Finding]) -> tuple[dict[str, Any], str] | None:
    source = lookup.source or block.source
    data = read_sheet(source, lookup.sheet if lookup.source or lookup.sheet else block.sheet, lookup.place)
    if data is None:
        return None
    where = f"{data.file} › {data.sheet}" if data.sheet else data.file
    header_row = find_header_row(data.rows, [lookup.key, lookup.value])
    if header_row is None:
        first = Header.of(data.rows[0]) if data.rows else None
        present = ", ".join(repr(n) for n in first.names()) if first else "none"
        findings.append(Finding("error", "lookup-columns",
                                f"no row near the top of {where} holds both {lookup.key!r} and {lookup.value!r} "
                                f"(the first row's columns: {present})", lookup.place))
        return None
    header = Header.of(header_row)
    k, v = header.columns[lookup.key], header.columns[lookup.value]
    table: dict[str, Any] = {}
    for row in data.rows:
        if row.number <= header.row:
            continue
        key = row.values[k] if k < len(row.values) else None
        if not is_blank(key):
            table.setdefault(text_of(key).strip(WHITESPACE), row.values[v] if v < len(row.values) else None)
    return table, f"a {lookup.key} listed in {where}"

