"""The columns the mappings read of each source: what a source with no columns of its own (a
query's result matched case-insensitively, the paths of a JSON or XML record) is asked for, and
what the fingerprint of the values read covers.

A block reads its fields' columns (and templates'), its `where` and `when` columns; a lookup reads
its key and value columns of its table (the block's own source when it names none). A column read
by a field that collects (`collect: list | join`) may find several values in one record.
"""

from __future__ import annotations

from collections.abc import Iterable

from loader.source.mapping import Block
from loader.source.readers.kinds import Source
from loader.source.readers.record_rows import FieldPaths

Identity = tuple[Source, int | None]


def block_columns(block: Block) -> dict[str, bool]:
    """The columns a block reads of its own source, each with whether a field collecting reads it."""
    columns: dict[str, bool] = {}
    for variant in block.variants:
        for spec in variant.fields:
            for column in spec.columns:
                columns[column] = columns.get(column, False) or spec.collect is not None
            for condition in spec.when:
                columns.setdefault(condition.column, False)
            if spec.lookup is not None and spec.lookup.source is None:
                columns.setdefault(spec.lookup.key, False)
                columns.setdefault(spec.lookup.value, False)
        for condition in variant.where:
            columns.setdefault(condition.column, False)
    return columns


def columns_read(blocks: Iterable[Block]) -> dict[Identity, tuple[FieldPaths, ...]]:
    """Per source (by identity), the columns every block and lookup reads of it, as paths."""
    found: dict[Identity, dict[str, bool]] = {}
    for block in blocks:
        own = found.setdefault(block.source.identity, {})
        for column, collect in block_columns(block).items():
            own[column] = own.get(column, False) or collect
        for variant in block.variants:
            for spec in variant.fields:
                if spec.lookup is not None and spec.lookup.source is not None:
                    table = found.setdefault(spec.lookup.source.identity, {})
                    table.setdefault(spec.lookup.key, False)
                    table.setdefault(spec.lookup.value, False)
    return {identity: tuple(FieldPaths(column, (column,), collect) for column, collect in columns.items())
            for identity, columns in found.items()}
