"""A block's `renamed:` as written in a mapping, made a `RenameRule` (or refused, saying why).

Which key field moves: for `as: update` (the default where the profile lists a key field as
renamable) the one field the service lets an update change; for `as: successor` (the default
otherwise) the block's one key field, on an entity with `custom_attributes` (its `Replaces` label
links the new record to the old). A key holding a reference is refused either way: that record is
renumbered in its own block.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loader.places import MappingPlace
from loader.profile import EntityProfile
from loader.record_fields import CUSTOM
from loader.source.entity_schemas import field_names
from loader.source.mapping import Crosswalk, FieldSpec, RenameRule
from loader.source.readers import Source


@dataclass(frozen=True)
class Refusal:
    """Why a `renamed:` is refused: a finding's code and message, and whether it points at the key."""

    code: str
    message: str
    at_key: bool = True


def rename_rule(entity_name: str, entity: EntityProfile, data: Mapping[str, Any], specs: Sequence[FieldSpec],
                place: MappingPlace, key_place: MappingPlace,
                source_named: Callable[[str], Source | None]) -> RenameRule | Refusal:
    """The rule of the block `data` (its `key` and `renamed:`); `source_named` finds a crosswalk's source."""
    key = tuple(data["key"])
    by_name = {s.name: s for s in specs}
    referring = [name for name in key if name in by_name and by_name[name].ref is not None]
    if referring:
        return Refusal("bad-renamed", f"`renamed:` cannot move a key holding a reference ({referring[0]!r} refers to "
                       "another record): renumber that record in its own block")
    renamable = [name for name in key if name in entity.renamable]
    spec = data["renamed"]
    how = str(spec.get("as", "update" if len(renamable) == 1 else "successor"))
    if how == "successor":  # a new record beside the old one: any single key field, and a label to link them
        if len(key) != 1 or CUSTOM not in field_names(entity):
            return Refusal("bad-renamed", f"`renamed: {{as: successor}}` needs a key of one field and an entity with "
                           f"custom_attributes (its `Replaces` label links the two records); {entity_name} keyed by "
                           f"{list(key)} has not")
        renamable = [key[0]]
    elif len(renamable) != 1:
        return Refusal("bad-renamed", f"`renamed:` needs exactly one key field of {entity_name} that the service "
                       f"lets an update change; the profile lists {len(renamable)} of {list(key)} as `renamable:` "
                       "(confirm with the service's operator, then list it in the profile)")
    crosswalk = None
    if "source" in spec:
        source = source_named(spec["source"])
        if source is None:
            return Refusal("source-kind", f"renamed source {spec['source']!r} is a source found wrong above", False)
        crosswalk = Crosswalk(source, spec.get("sheet"), str(spec["from"]).strip(), str(spec["to"]).strip(), place)
    return RenameRule(str(spec["column"]) if "column" in spec else None, renamable[0], key_place, how, crosswalk)
