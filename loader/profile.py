"""The entity profile: what the service looks like, loaded from YAML data.

The planner, the client and the executor are generic over this; nothing about
paths, keys, read-only fields or status transitions lives in their code.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import yaml

from loader.errors import ProfileError
from loader.files.package_data import read_text
from loader.files.package_data import schema as package_schema


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str


@dataclass(frozen=True)
class Reference:
    """A field holding the id (or ids) of records of other entities."""

    entities: tuple[str, ...]
    shape: str  # "id" (the id string) or "object_id" ({"id": ...})
    is_list: bool = False


@dataclass(frozen=True)
class StatusRule:
    field: str
    initial: str
    on_create: bool
    transitions: Mapping[str, tuple[str, ...]]
    published: frozenset[str] = frozenset()  # states a retirement never moves through (`on_dropped:`)

    def retiring_path(self, current: str, desired: str) -> tuple[str, ...] | None:
        """The shortest legal path from `current` to `desired` that never enters a published state
        (a record not published is never published on its way out); None when there is none."""
        return self.path(current, desired, avoiding=self.published)

    def path(self, current: str, desired: str, *, avoiding: frozenset[str] = frozenset()) -> tuple[str, ...] | None:
        """The shortest legal sequence of states after `current` ending at `desired`, passing through
        none of the states `avoiding` on its way (it may end in one).

        () when already there; None when no legal path exists.
        """
        if current == desired:
            return ()
        seen = {current}
        queue: deque[tuple[str, tuple[str, ...]]] = deque([(current, ())])
        while queue:
            state, steps = queue.popleft()
            for nxt in self.transitions.get(state, ()):
                if nxt == desired:
                    return (*steps, nxt)
                if nxt in seen or nxt in avoiding:
                    continue
                seen.add(nxt)
                queue.append((nxt, (*steps, nxt)))
        return None

@dataclass(frozen=True)
class FieldsByType:
    """Which fields each value of `field` takes (credential types, spec 2.4)."""

    field: str
    types: Mapping[str, frozenset[str]]

    @cached_property
    def specific(self) -> frozenset[str]:
        """The fields some type takes and another does not."""
        return frozenset().union(*self.types.values())


@dataclass(frozen=True)
class EntityProfile:
    name: str
    path: str
    key: tuple[str, ...]
    item_path: str | None = None
    create: Endpoint | None = None
    update: Endpoint | None = None
    get_by_code: bool = False
    writable: bool = True
    read_only: frozenset[str] = frozenset()
    create_only: frozenset[str] = frozenset()
    immutable: frozenset[str] = frozenset()
    forbidden: frozenset[str] = frozenset()
    set_fields: frozenset[str] = frozenset()
    unique: frozenset[str] = frozenset()  # fields the service refuses duplicates of (409)
    renamable: frozenset[str] = frozenset()  # key fields an update may change (a renumbered code)
    personal: frozenset[str] = frozenset()  # personal data: the history keys the entity, whatever a mapping says
    only_when: Mapping[str, tuple[str, Any]] = field(default_factory=dict)
    fields_by_type: FieldsByType | None = None
    references: Mapping[str, Reference] = field(default_factory=dict)
    status: StatusRule | None = None
    schema: str | None = None


@dataclass(frozen=True)
class Envelope:
    """Names of the fields of response envelopes (spec 2.1; `version`'s name is not shown there)."""

    data: str = "data"
    total: str = "total"
    page_total: str = "page_total"
    page_token: str = "page_token"
    environment: str = "environment"
    version: str = "version"


@dataclass(frozen=True)
class ServiceProfile:
    token_path: str = "/realms/{realm}/protocol/openid-connect/token"
    page_size: int = 100
    page_token_param: str = "page_token"
    envelope: Envelope = field(default_factory=Envelope)


@dataclass(frozen=True)
class Profile:
    service: ServiceProfile
    entities: Mapping[str, EntityProfile]
    creation_order: tuple[str, ...]
    unique_groups: Mapping[str, tuple[str, tuple[str, ...]]]  # name -> (field, entities)
    fingerprint: str = ""  # "sha256:<hex>" of the effective profile data, so a plan can name it

    def entity(self, name: str) -> EntityProfile:
        try:
            return self.entities[name]
        except KeyError:
            known = ", ".join(sorted(self.entities))
            raise ProfileError(
                f"unknown entity {name!r}", hint=f"use one of: {known}"
            ) from None

    def unique_group_of(self, entity: str) -> tuple[str, tuple[str, ...]] | None:
        """(field, entities) of the uniqueness group `entity` belongs to, if any."""
        for group_field, members in self.unique_groups.values():
            if entity in members:
                return group_field, members
        return None


def profile_schema() -> dict[str, Any]:
    return package_schema("profile.schema.json")


def default_profile_data() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(read_text("loader", "profile.yaml"))
    return data


def _deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for name, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(name), Mapping):
            merged[name] = _deep_merge(merged[name], value)
        else:
            merged[name] = value
    return merged


def load_profile(
    override: Mapping[str, Any] | None = None,
    *,
    source: str = "loader.yaml",
    locate: Callable[[tuple[str | int, ...]], str] | None = None,
) -> Profile:
    """The packaged profile, with `override` (from loader.yaml `profile:`) merged over it.

    `locate` gives the `file:line:col` of a path under `profile:` (loader.yaml's places), so each
    problem of the override is reported where it is written.
    """
    data = default_profile_data()
    if override:
        data = _deep_merge(data, override)
    errors = sorted(
        jsonschema.Draft202012Validator(profile_schema()).iter_errors(data),
        key=lambda e: list(e.absolute_path),
    )
    found = [(tuple(e.absolute_path), _message(e)) for e in errors] or _path_problems(data)
    lines = [
        (f"{locate(path)}: " if locate and override else "")
        + f"profile.{'.'.join(map(str, path)) or '(root)'}: {message}"
        for path, message in found
    ]
    if lines:
        raise ProfileError(
            "the entity profile is invalid:\n  " + "\n  ".join(lines),
            where=source if override else None,
            hint="fix the `profile:` section of loader.yaml (see schemas/profile.schema.json)",
        )
    profile = _build(data)
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return replace(profile, fingerprint=f"sha256:{hashlib.sha256(canonical).hexdigest()}")


def _message(error: jsonschema.ValidationError) -> str:
    """The schema's message without the value itself (a secret pasted into the profile stays out)."""
    if isinstance(error.instance, str | int | float) and not isinstance(error.instance, bool):
        return str(error.message).replace(repr(error.instance), "the value")
    return str(error.message)


def is_service_path(value: str) -> bool:
    """True for a path on the service (`/institution/...`), never an address of its own: no scheme,
    no `//host`, no backslash or control character that a URL parser could read as one."""
    if not value.startswith("/") or value.startswith("//"):
        return False
    if "\\" in value or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        return False
    parts = urlsplit(value)
    return not parts.scheme and not parts.netloc


def _path_problems(data: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """Every path of the profile that is not a plain service path (an override could send the token away)."""
    found: list[tuple[tuple[str | int, ...], Any]] = [
        (("service", "token_path"), data.get("service", {}).get("token_path", "/"))
    ]
    for name, spec in data.get("entities", {}).items():
        found += [(("entities", name, key), spec[key]) for key in ("path", "item_path") if key in spec]
        found += [(("entities", name, op, "path"), spec[op].get("path")) for op in ("create", "update") if op in spec]
    return [
        (path, "must be a path on the service starting with one / (e.g. /institution/tags), "
         "never an address with a scheme or host")
        for path, value in found
        if not (isinstance(value, str) and is_service_path(value))
    ]


def _build(data: Mapping[str, Any]) -> Profile:
    entities = {name: _entity(name, spec) for name, spec in data["entities"].items()}
    for entity in entities.values():
        for fname, ref in entity.references.items():
            unknown = [t for t in ref.entities if t not in entities]
            if unknown:
                raise ProfileError(
                    f"entity {entity.name!r} field {fname!r} references unknown entity {unknown[0]!r}"
                )
    groups = {
        name: (spec["field"], tuple(spec["entities"]))
        for name, spec in data.get("unique_groups", {}).items()
    }
    order = tuple(data.get("creation_order", ())) or tuple(entities)
    order += tuple(name for name in entities if name not in order)
    service = dict(data["service"])
    service["envelope"] = Envelope(**service.get("envelope", {}))
    return Profile(ServiceProfile(**service), entities, order, groups)


def _entity(name: str, spec: Mapping[str, Any]) -> EntityProfile:
    status = spec.get("status")
    return EntityProfile(
        name=name,
        path=spec["path"],
        key=tuple(spec["key"]),
        item_path=spec.get("item_path"),
        create=Endpoint(**spec["create"]) if "create" in spec else None,
        update=Endpoint(**spec["update"]) if "update" in spec else None,
        get_by_code=spec.get("get_by_code", False),
        writable=spec.get("writable", "create" in spec or "update" in spec),
        read_only=frozenset(spec.get("read_only", ())),
        create_only=frozenset(spec.get("create_only", ())),
        immutable=frozenset(spec.get("immutable", ())),
        forbidden=frozenset(spec.get("forbidden", ())),
        set_fields=frozenset(spec.get("set_fields", ())),
        unique=frozenset(spec.get("unique", ())),
        renamable=frozenset(spec.get("renamable", ())),
        personal=frozenset(spec.get("personal", ())),
        only_when={f: (rule["field"], rule["equals"]) for f, rule in spec.get("only_when", {}).items()},
        fields_by_type=FieldsByType(
            spec["fields_by_type"]["field"],
            {t: frozenset(names) for t, names in spec["fields_by_type"]["types"].items()},
        ) if "fields_by_type" in spec else None,
        references={
            f: Reference(tuple(r["entity"]), r["shape"], r.get("list", False))
            for f, r in spec.get("references", {}).items()
        },
        status=StatusRule(
            field=status["field"],
            initial=status["initial"],
            on_create=status.get("on_create", False),
            transitions={s: tuple(n) for s, n in status["transitions"].items()},
            published=frozenset(status.get("published", ())),
        )
        if status
        else None,
        schema=spec.get("schema"),
    )
