"""Drift between cycles (contract section 12): each source's shape as read, and what changed since
the shape the last apply recorded.

A shape is kept per source (a sheet of a workbook, a query, a feed), whoever maps it: the columns
(a header's names, or the paths seen), the columns the blocks read, the rows read, the rows each
block kept after `where`, and the values of the `drift.values` fields. Blocks sharing a sheet do
not flag each other's columns: a column is "mapped" when any block of the source reads it.
Findings say what changed, at the mapping line of the block (or its `drift:`), and come first in
every report. The shapes are plain JSON values (`loader.history.shape_store` keeps them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from loader.findings import Finding
from loader.places import Place
from loader.source.block_records import BlockRecords
from loader.source.checks import field_value, is_empty, texts
from loader.source.drift_rules import MAX_VALUES

Shapes = dict[str, dict[str, Any]]  # source -> its shape, as JSON values
MOSTLY_FILLED, MOSTLY_EMPTY = 0.5, 0.1  # a column held by half the rows or more, now by fewer than a tenth
_SUFFIX = re.compile(r"#[0-9]+$")  # "Status#1": the first of two "Status" columns


def source_key(block: BlockRecords) -> str:
    return f"{block.source_file} › {block.sheet}" if block.sheet else block.source_file


def block_key(block: BlockRecords) -> str:
    return f"{block.mapping_file}#{block.block}"


def values_seen(block: BlockRecords) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The distinct values of each `drift.values` field among the block's records (one more than
    MAX_VALUES at most: enough to say there are too many)."""
    seen: list[tuple[str, tuple[str, ...]]] = []
    for name in block.drift.values:
        found: dict[str, None] = {}
        for record in block.records:
            value = field_value(record, name)
            if not is_empty(value):
                found.update(dict.fromkeys(texts(value)))
            if len(found) > MAX_VALUES:
                break
        seen.append((name, tuple(sorted(found))))
    return tuple(seen)


def shapes_of(blocks: Iterable[BlockRecords]) -> Shapes:
    """The shape of every source the blocks read."""
    shapes: Shapes = {}
    for block in blocks:
        if block.shape is None:
            continue
        shape = shapes.setdefault(source_key(block), {
            "columns": sorted({c for c in block.shape.columns if c}), "mapped": [], "rows": block.shape.rows,
            "kept": {}, "values": {}})
        shape["mapped"] = sorted(set(shape["mapped"]) | {_SUFFIX.sub("", c) for c in block.columns_read})
        shape["kept"][block_key(block)] = block.rows_read - block.rows_filtered
        for name, values in block.values_seen:
            shape["values"][f"{block_key(block)}:{name}"] = list(values)
        if block.filled:
            shape["filled"] = dict(block.filled)
    return shapes


def drift_findings(previous: Mapping[str, Any], blocks: Sequence[BlockRecords]) -> list[Finding]:
    """What changed in each source since `previous` (the shapes the last apply recorded)."""
    now = shapes_of(blocks)
    findings: list[Finding] = []
    for key, shape in now.items():
        before = previous.get(key)
        if not isinstance(before, Mapping):
            continue  # a source not read before: nothing to compare
        readers = [b for b in blocks if b.shape is not None and source_key(b) == key]
        findings += _columns(key, shape, before, readers)
        findings += _rows(key, shape, before, readers)
        findings += _values(shape, before, readers)
    return findings


def _columns(key: str, shape: Mapping[str, Any], before: Mapping[str, Any],
             readers: Sequence[BlockRecords]) -> list[Finding]:
    accepted = {a for b in readers for a in b.drift.accept}
    frozen = any(b.drift.columns == "freeze" for b in readers)
    severity: Literal["error", "warning"] = "error" if frozen else "warning"
    first = readers[0]
    place: Place = first.drift.place or first.place
    mapped = set(shape["mapped"]) | set(before.get("mapped", ()))
    findings: list[Finding] = []
    for column in sorted(set(shape["columns"]) - set(before.get("columns", ())) - accepted):
        lost = next(((b, v) for b in readers if (v := b.drift.unlisted_repeat(column)) is not None), None)
        if lost is not None:
            block, value = lost
            findings.append(Finding(
                "error", "drift-repeat",
                f"{key}: new column {column!r} matches the repeat of block {block.block} with "
                f"{block.drift.repeat_name}={value}, which `repeat:` does not list: its values would be lost",
                block.place, rule=block.place))
        elif column not in mapped:
            text = f"{key}: new column {column!r}, read by no block" + (" (columns: freeze)" if frozen else "")
            findings.append(Finding(severity, "drift-new-column", text + _accept_hint(column), place, rule=place))
    for column in sorted(set(before.get("columns", ())) - set(shape["columns"]) - accepted):
        findings.append(Finding(severity, "drift-gone-column", f"{key}: column {column!r} is gone"
                                + (" (columns: freeze)" if frozen else "") + _accept_hint(column), place, rule=place))
    return findings + _emptied(key, shape, before, accepted, place)


def _emptied(key: str, shape: Mapping[str, Any], before: Mapping[str, Any], accepted: set[str],
             place: Place) -> list[Finding]:
    """Columns most rows held a value in, that hardly any row holds one in now."""
    was, now = before.get("filled", {}), shape.get("filled", {})
    return [Finding("warning", "drift-empty-column", f"{key}: column {column!r} is now mostly empty: {now[column]:.0%} "
                    f"of rows hold a value (was {was[column]:.0%})" + _accept_hint(column), place, rule=place)
            for column in sorted((set(was) & set(now)) - accepted)
            if isinstance(was[column], int | float) and was[column] >= MOSTLY_FILLED and now[column] < MOSTLY_EMPTY]


def _accept_hint(change: str) -> str:
    return f"; if that is intended, add it to the block's drift: accept: [{change!r}]"


def _rows(key: str, shape: Mapping[str, Any], before: Mapping[str, Any],
          readers: Sequence[BlockRecords]) -> list[Finding]:
    findings: list[Finding] = []
    for block in readers:
        limit = block.drift.rows
        if limit is None:
            continue
        place: Place = block.drift.place or block.place
        pairs = [("rows read", before.get("rows"), shape["rows"]),
                 (f"rows kept by {block.block}", before.get("kept", {}).get(block_key(block)),
                  shape["kept"][block_key(block)])]
        for what, old, new in pairs:
            if isinstance(old, int) and old > 0 and abs(new - old) / old > limit:
                findings.append(Finding("warning", "drift-rows",
                                        f"{key}: {what} went from {old} to {new} ({(new - old) / old:+.0%}), "
                                        f"beyond drift rows: {limit:.0%}", place, rule=place))
    return findings


def _values(shape: Mapping[str, Any], before: Mapping[str, Any], readers: Sequence[BlockRecords]) -> list[Finding]:
    findings: list[Finding] = []
    for block in readers:
        place: Place = block.drift.place or block.place
        accepted = set(block.drift.accept)
        for name, values in block.values_seen:
            if len(values) > MAX_VALUES:
                findings.append(Finding("error", "drift-values", f"drift values: {name} of block {block.block} holds "
                                        f"more than {MAX_VALUES} distinct values: list fewer-valued fields",
                                        place, rule=place))
                continue
            known = before.get("values", {}).get(f"{block_key(block)}:{name}")
            if known is None:
                continue
            for value in sorted(set(values) - set(known)):
                if f"{name}={value}" not in accepted:
                    findings.append(Finding("warning", "drift-new-value",
                                            f"{block.block}: {name} has a value never seen before: {value!r}"
                                            + _accept_hint(f"{name}={value}"), place, rule=place))
    return findings
