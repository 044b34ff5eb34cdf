"""The columns the mappings read of each source: what a source with no columns of its own (a
query's result matched case-insensitively, the paths of a JSON or XML record) is asked for, and
what the fingerprint of the values read covers.

A block reads its fields' columns (and templates'), its `where` and `when` columns; a lookup reads
its key and value columns of its table (the block's own source when it names none). A column read
by a field that collects (`collect: list | join`) may find several values in one record; a field
listing paths (`column: [path, ...]`) reads one column, whose value the first path finding one gives.
"""

from __future__ import annotations

from collections.abc import Iterable

from loader.source.mapping import Block
from loader.source.readers.kinds import Source
from loader.source.readers.record_rows import FieldPaths

Identity = tuple[Source, int | None]


def block_columns(block: Block) -> dict[str, bool]:
    """The columns a block reads of its own source, each with whether a field collecting reads it."""
    return {column: collect for column, (_, collect) in _block_paths(block).items()}


def _block_paths(block: Block) -> dict[str, tuple[tuple[str, ...], bool]]:
    """Each column a block reads of its own source: the paths that give it (a list of paths gives one
    column, `FieldSpec.paths`) and whether a field collecting reads it."""
    columns: dict[str, tuple[tuple[str, ...], bool]] = {}

    def read(column: str, paths: tuple[str, ...] = (), collect: bool = False) -> None:
        before = columns.get(column, ((), False))
        columns[column] = (paths or before[0] or (column,), before[1] or collect)

    for variant in block.variants:
        for spec in variant.fields:
            for column in spec.columns:
                read(column, spec.paths, spec.collect is not None)
            for condition in spec.when:
                read(condition.column)
            if spec.lookup is not None and spec.lookup.source is None:
                read(spec.lookup.key)
                read(spec.lookup.value)
        for condition in variant.where:
            read(condition.column)
    return columns


def columns_read(blocks: Iterable[Block]) -> dict[Identity, tuple[FieldPaths, ...]]:
    """Per source (by identity), the columns every block and lookup reads of it, as paths."""
    found: dict[Identity, dict[str, tuple[tuple[str, ...], bool]]] = {}
    for block in blocks:
        own = found.setdefault(block.source.identity, {})
        for column, (paths, collect) in _block_paths(block).items():
            own[column] = (paths, own.get(column, ((), False))[1] or collect)
        for variant in block.variants:
            for spec in variant.fields:
                if spec.lookup is not None and spec.lookup.source is not None:
                    table = found.setdefault(spec.lookup.source.identity, {})
                    table.setdefault(spec.lookup.key, ((spec.lookup.key,), False))
                    table.setdefault(spec.lookup.value, ((spec.lookup.value,), False))
        crosswalk = block.renamed.crosswalk if block.renamed is not None else None
        if crosswalk is not None:
            table = found.setdefault(crosswalk.source.identity, {})
            for column in (crosswalk.old, crosswalk.new):
                table.setdefault(column, ((column,), False))
    return {identity: tuple(FieldPaths(column, paths, collect) for column, (paths, collect) in columns.items())
            for identity, columns in found.items()}
