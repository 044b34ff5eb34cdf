"""Which entities the history keeps under keyed digests: the one rule plan, apply and the
`loader history` commands share."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loader.profile import Profile
    from loader.source.mapping import LoadedMapping


def personal_entities(mappings: Iterable[LoadedMapping], profile: Profile) -> frozenset[str]:
    """The entities whose history is kept as keyed digests: those `mappings` load that have a field
    the profile names personal (an applicant, whatever the mapping marks) or a field some block
    marks `pii: true` (in any `repeat`), and those with a field referring to such an entity (a
    credential keyed by its applicant's external id would name the person)."""
    blocks = [block for loaded in mappings if loaded.mapping is not None for block in loaded.mapping.blocks]
    fields = [(block.entity, spec) for block in blocks for variant in block.variants for spec in variant.fields]
    personal = {entity for entity, spec in fields if spec.pii}
    personal |= {block.entity for block in blocks
                 if block.entity in profile.entities and profile.entity(block.entity).personal}
    while True:
        more = {entity for entity, spec in fields if spec.ref in personal} - personal
        if not more:
            return frozenset(personal)
        personal |= more
