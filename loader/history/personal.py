"""Which entities the history keeps under keyed digests: the one rule plan, apply and the
`loader history` commands share."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loader.source.mapping import LoadedMapping


def personal_entities(mappings: Iterable[LoadedMapping]) -> frozenset[str]:
    """The entities whose history is kept as keyed digests: those with a field some block of
    `mappings` marks `pii: true` (in any `repeat`), and those with a field referring to such an
    entity (a credential keyed by its applicant's external id would name the person)."""
    fields = [(block.entity, spec) for loaded in mappings if loaded.mapping is not None
              for block in loaded.mapping.blocks for variant in block.variants for spec in variant.fields]
    personal = {entity for entity, spec in fields if spec.pii}
    while True:
        more = {entity for entity, spec in fields if spec.ref in personal} - personal
        if not more:
            return frozenset(personal)
        personal |= more
