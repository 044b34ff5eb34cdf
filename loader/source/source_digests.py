"""Fingerprints of the sources whose kind digests the values read, not a file's bytes.

A plan names what it was made from: a file by the digest of its bytes (`loader.files.fingerprints`);
a source of a kind that has no file, or whose bytes change without its records changing (a query's
row order), by an order-independent digest of the values the mapping reads
(`SourceKind.fingerprint`), filed under `kind:name` (`loader.source.readers.fingerprint_name`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from loader.source.columns_read import block_columns
from loader.source.mapping import Block
from loader.source.readers import SheetData, Source, fingerprint_name, kind_for


@dataclass
class ValuesRead:
    """What the blocks of one run read of the sources whose kind digests values: each source's
    table and the columns any block maps from it."""

    tables: dict[tuple[Source, int | None], tuple[SheetData, int]] = field(default_factory=dict)
    columns: dict[tuple[Source, int | None], set[str]] = field(default_factory=dict)

    def add(self, block: Block, data: SheetData, header_row: int) -> None:
        if kind_for(block.source).fingerprint is None:
            return
        self.tables.setdefault(block.source.identity, (data, header_row))
        self.columns.setdefault(block.source.identity, set()).update(_columns(block))

    def fingerprints(self) -> dict[str, str]:
        """`kind:name` -> the digest of the values the mappings read of each source (of each source
        so named: two mapping files may each name their own)."""
        digests: dict[str, list[str]] = {}
        for identity, (data, header_row) in self.tables.items():
            source = identity[0]
            digest = kind_for(source).fingerprint
            assert digest is not None
            digests.setdefault(fingerprint_name(source), []).append(
                digest(data, header_row, sorted(self.columns[identity])))
        return {name: found[0] if len(found) == 1 else _joined(found) for name, found in digests.items()}


def _joined(digests: list[str]) -> str:
    return f"sha256:{hashlib.sha256(' '.join(sorted(digests)).encode()).hexdigest()}"


def _columns(block: Block) -> set[str]:
    """The columns a block reads of its source (`columns_read.block_columns`)."""
    return set(block_columns(block))
