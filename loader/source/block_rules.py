"""The block-wide keys of one mapping block (`key`, `on_dropped`, `duplicates`) checked and built.

Each builder reads the schema-valid data of the block and reports what it finds wrong through `fail`, as
the field builders in `mapping_builder` do; none of them needs the others.
"""

from __future__ import annotations

from typing import Any, Protocol

from loader.profile import Profile
from loader.record_fields import CUSTOM
from loader.source.entity_schemas import field_names
from loader.source.mapping import DuplicateRule, FieldSpec, OnDropped
from loader.yaml_files import MarkedDocument


class Fail(Protocol):
    """Records an error finding at a place in the mapping file."""

    def __call__(self, code: str, message: str, where: tuple[Any, ...], *, key: bool = False) -> None: ...


def check_key(data: Any, base: tuple[Any, ...], specs: list[FieldSpec], fail: Fail) -> None:
    """Every key field mapped, and none of them `collect`."""
    managed = {s.name for s in specs}
    for index, key_field in enumerate(data["key"]):
        if key_field not in managed:
            fail("key-not-mapped", f"key field {key_field!r} is not in `fields`; every key field must be "
                 "mapped", (*base, "key", index))
    for spec in specs:
        if spec.collect and spec.name in data["key"]:
            fail("bad-collect", f"key field {spec.name!r} cannot `collect`: rows are gathered by their key",
                 (*base, "fields", spec.name, "collect"))


def duplicate_rule(data: Any, managed: set[str], base: tuple[Any, ...], fail: Fail) -> DuplicateRule | None:
    """The block's `duplicates:` (its shape checked by the schema); every field it matches on must be mapped."""
    if data is None:
        return None
    for index, name in enumerate(data["match"]):
        if name not in managed:
            fail("duplicates-not-mapped", f"`duplicates` matches on {name!r}, which `fields` does not map; "
                 "map it or leave it out of `match`", (*base, "duplicates", "match", index))
    return DuplicateRule(tuple(data["match"]), float(data.get("threshold", 0.9)))


def on_dropped_rule(doc: MarkedDocument, profile: Profile, entity_name: str, data: Any, base: tuple[Any, ...],
                    fail: Fail) -> OnDropped | None:
    """The block's `on_dropped: {set: ...}` (None for `keep`): fields of the entity, no key field,
    a status only one of its states."""
    spec = data.get("on_dropped", "keep")
    if spec == "release":
        return OnDropped((), doc.place((*base, "on_dropped"), key=True), release=True)
    if not isinstance(spec, dict):
        return None
    where = (*base, "on_dropped", "set")
    entity = profile.entity(entity_name)
    known = set(field_names(entity)) - set(data["key"]) - entity.read_only - entity.immutable - entity.forbidden
    values: list[tuple[str, Any]] = []
    for name, value in spec["set"].items():
        if name == CUSTOM and isinstance(value, dict) and CUSTOM in field_names(entity):
            values += [(f"{CUSTOM}.{label}", text) for label, text in value.items()]
        elif name not in known:
            fail("bad-on-dropped", f"on_dropped cannot set {name!r}: set fields of {entity_name} that an "
                 "update may change (not its key)", (*where, name), key=True)
        elif entity.status is not None and name == entity.status.field and value not in entity.status.transitions:
            fail("bad-on-dropped", f"on_dropped sets {name} to {value!r}, not a state of {entity_name}; "
                 f"expected one of: {', '.join(entity.status.transitions)}", (*where, name))
        else:
            values.append((name, value))
    return OnDropped(tuple(values), doc.place((*base, "on_dropped"), key=True))
