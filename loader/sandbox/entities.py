"""The sandbox's entities: their fields, and validation of request bodies field by field.

Decisions for what the spec leaves unshown (contract section 8 decides the rest):

- Every writable field is optional and nullable unless listed as required; `null` in a PATCH
  clears the field (it disappears from the record); `null` in a create is the same as absent.
- Required on create (and never null): curriculum `code`, `name`; applicant `external_id`;
  credential `applicant_id`, `type`; arrangement `code`, `name`; application `applicant_id`;
  suggestion `application_id`; comment `text`; tag `name`; user `email_address`.
  A required string must not be empty. A field the service gives a default (arrangement,
  application and suggestion `status`) cannot be cleared either: `null` is refused (400).
- Read-only fields (`id`, `metadata`, `type` of curriculum, `children`, `uploadedBy`, `comments`,
  `credit_matches`) sent in a body are refused (400): the service sets them.
  Exception: subject `access` may be sent in an update and is silently ignored (spec 2.2).
- Refused outright: arrangement `exemption` (create and update), arrangement `status` on create,
  application `suggestions`; any field not listed here (`unknown field 'x'`).
- Types: strings are JSON strings; `custom_attributes` maps strings to strings; `parent` is
  `{"id": "<id>"}`; list fields are lists of strings; `date_of_birth` is an ISO date
  (YYYY-MM-DD); `result`, `duration` and curriculum `year` are a string or a number;
  arrangement `mapping` is any JSON value; `send_email` and user `active` are booleans.
- Unique per institution (409 naming the holder): curriculum `code` across all four curriculum
  collections (case-sensitive); applicant `external_id`; arrangement `code`; tag `name`;
  role `name`; user `email_address`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

CURRICULUM = ("schools", "courses", "programs", "subjects")
CREDENTIAL_TYPES = ("TERTIARY", "SUBJECT", "PROFESSIONAL", "EMPLOYMENT")
ARRANGEMENT_STATUSES = ("DRAFT", "READY", "ACTIVE", "INACTIVE")
ARRANGEMENT_MOVES: dict[str, tuple[str, ...]] = {
    "DRAFT": ("READY",),
    "READY": ("DRAFT", "ACTIVE"),
    "ACTIVE": ("INACTIVE",),
    "INACTIVE": (),
}
APPLICATION_STATUSES = ("SUBMITTED", "IN_REVIEW", "OFFERED", "DECLINED", "WITHDRAWN")
SUGGESTION_STATUSES = ("PENDING", "ACCEPTED", "REJECTED")


class ValidationFailure(ValueError):
    """A request body or parameter the service refuses (400 `ValidationError: <reason>`)."""


@dataclass(frozen=True)
class Field:
    kind: str  # str, date, num_or_str, bool, str_list, attrs, object_id, json, enum
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Entity:
    """How one collection behaves; the route layer and the service are generic over these."""

    name: str  # singular, as in the loader's profile
    collection: str  # storage name, and the last path segment
    path: str
    fields: dict[str, Field]
    required: tuple[str, ...] = ()
    key_field: str | None = None  # stored in the `code` column; GET one accepts it in place of the id
    unique: str | None = None  # uniqueness namespace of key_field (shared by the curriculum)
    ref_field: str | None = None  # stored in the `ref` column
    read_only: tuple[str, ...] = ("id", "metadata")
    ignored_on_update: tuple[str, ...] = ()
    create_only: tuple[str, ...] = ()  # accepted on create, refused on update
    refused: dict[str, str] = field(default_factory=dict)  # field -> reason, always refused
    refused_on_create: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    type_value: str | None = None  # curriculum `type`, set by the server
    creatable: bool = True
    updatable: bool = True


_TEXT = Field("str")
_CURRICULUM_FIELDS = {
    "code": _TEXT,
    "name": _TEXT,
    "description": _TEXT,
    "year": Field("num_or_str"),
    "custom_attributes": Field("attrs"),
    "parent": Field("object_id"),
}


def _curriculum(collection: str, type_value: str, extra: dict[str, Field] | None = None) -> Entity:
    return Entity(
        name=collection[:-1],
        collection=collection,
        path=f"/institution/catalogue/{collection}",
        fields={**_CURRICULUM_FIELDS, **(extra or {})},
        required=("code", "name"),
        key_field="code",
        unique="curriculum",
        ref_field="parent",
        read_only=("id", "metadata", "type", "children"),
        ignored_on_update=("access",) if extra and "access" in extra else (),
        type_value=type_value,
    )


ENTITIES: dict[str, Entity] = {
    e.collection: e
    for e in (
        _curriculum("schools", "SCHOOL"),
        _curriculum("courses", "COURSE"),
        _curriculum("programs", "PROGRAM"),
        _curriculum("subjects", "SUBJECT", {"access": _TEXT}),
        Entity(
            name="tag",
            collection="tags",
            path="/institution/tags",
            fields={"name": _TEXT, "description": _TEXT},
            required=("name",),
            key_field="name",
            unique="tag",
        ),
        Entity(
            name="applicant",
            collection="applicants",
            path="/institution/applicants",
            fields={
                "external_id": _TEXT,
                "first_name": _TEXT,
                "last_name": _TEXT,
                "email_address": _TEXT,
                "date_of_birth": Field("date"),
                "eligible_deliveries": Field("str_list"),
                "custom_attributes": Field("attrs"),
            },
            required=("external_id",),
            key_field="external_id",
            unique="applicant",
        ),
        Entity(
            name="credential",
            collection="credentials",
            path="/institution/applicants/credentials",
            fields={
                "applicant_id": _TEXT,
                "type": Field("enum", CREDENTIAL_TYPES),
                "institutionCode": _TEXT,
                "institutionName": _TEXT,
                "country": _TEXT,
                "completionDate": _TEXT,
                "resultType": _TEXT,
                "result": Field("num_or_str"),
                "name": _TEXT,
                "duration": Field("num_or_str"),
                "parent": Field("object_id"),
                "tags": Field("str_list"),
            },
            required=("applicant_id", "type"),
            ref_field="applicant_id",
            read_only=("id", "metadata", "uploadedBy"),
        ),
        Entity(
            name="arrangement",
            collection="arrangements",
            path="/institution/articulation-arrangements",
            fields={
                "code": _TEXT,
                "name": _TEXT,
                "description": _TEXT,
                "status": Field("enum", ARRANGEMENT_STATUSES),
                "subjects_awarded": Field("str_list"),
                "mapping": Field("json"),
                "custom_attributes": Field("attrs"),
            },
            required=("code", "name"),
            key_field="code",
            unique="arrangement",
            refused={"exemption": "exemption is no longer accepted"},
            refused_on_create={"status": "status is not accepted on create (new arrangements start as DRAFT)"},
            defaults={"status": "DRAFT"},
        ),
        Entity(
            name="application",
            collection="applications",
            path="/institution/applications",
            fields={
                "applicant_id": _TEXT,
                "delivery": _TEXT,
                "status": Field("enum", APPLICATION_STATUSES),
                "tags": Field("str_list"),
                "custom_attributes": Field("attrs"),
                "send_email": Field("bool"),
            },
            required=("applicant_id",),
            ref_field="applicant_id",
            read_only=("id", "metadata", "comments", "credit_matches"),
            create_only=("send_email",),
            refused={"suggestions": "suggestions are not accepted here; use /institution/suggestions"},
            defaults={"status": "SUBMITTED"},
        ),
        Entity(
            name="suggestion",
            collection="suggestions",
            path="/institution/suggestions",
            fields={
                "application_id": _TEXT,
                "subject_id": _TEXT,
                "credential_id": _TEXT,
                "note": _TEXT,
                "status": Field("enum", SUGGESTION_STATUSES),
            },
            required=("application_id",),
            ref_field="application_id",
            defaults={"status": "PENDING"},
        ),
        Entity(
            name="comment",
            collection="comments",
            path="/institution/suggestions/{id}/comments",
            fields={"text": _TEXT},
            required=("text",),
            ref_field="suggestion_id",
            read_only=("id", "metadata", "suggestion_id"),
            updatable=False,
        ),
        Entity(
            name="user",
            collection="users",
            path="/institution/users",
            fields={
                "email_address": _TEXT,
                "first_name": _TEXT,
                "last_name": _TEXT,
                "identity_provider": _TEXT,
                "external_subject": _TEXT,
                "roles": Field("str_list"),
                "active": Field("bool"),
            },
            required=("email_address",),
            key_field="email_address",
            unique="user",
            defaults={"identity_provider": "sso", "active": True},
        ),
        Entity(
            name="role",
            collection="roles",
            path="/institution/roles",
            fields={"name": _TEXT, "description": _TEXT, "permissions": Field("str_list")},
            required=("name",),
            key_field="name",
            unique="role",
            creatable=False,
            updatable=False,
        ),
    )
}


def _text_ok(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from JSON escapes
        return False
    return True


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and _text_ok(value)


def _is_iso_date(value: str) -> bool:
    """YYYY-MM-DD exactly (`fromisoformat` alone also takes the basic form YYYYMMDD)."""
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return len(value) == 10


# Per field kind (except json): the test a value must pass, and what the refusal says it must be.
_SHAPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "str": (_is_text, "a string"),
    "date": (_is_text, "a string"),
    "enum": (_is_text, "a string"),
    "num_or_str": (
        lambda v: not isinstance(v, bool) and (isinstance(v, int | float) or _is_text(v)),
        "a string or a number",
    ),
    "bool": (lambda v: isinstance(v, bool), "a boolean"),
    "str_list": (lambda v: isinstance(v, list) and all(_is_text(item) for item in v), "a list of strings"),
    "attrs": (
        lambda v: isinstance(v, dict) and all(isinstance(i, str) and _text_ok(k) and _text_ok(i) for k, i in v.items()),
        "an object of string values",
    ),
    "object_id": (
        lambda v: isinstance(v, dict) and set(v) == {"id"} and _is_text(v["id"]),
        'an object {"id": "<id>"}',
    ),
}


def _check_value(name: str, spec: Field, value: Any) -> None:
    if spec.kind == "json":
        _check_json_text(name, value)
        return
    accepts, expected = _SHAPES[spec.kind]
    if not accepts(value):
        raise ValidationFailure(f"field '{name}' must be {expected}")
    if spec.kind == "enum" and value not in spec.choices:
        raise ValidationFailure(f"field '{name}' must be one of " + ", ".join(spec.choices))
    if spec.kind == "date" and not _is_iso_date(value):
        raise ValidationFailure(f"field '{name}' must be an ISO date (YYYY-MM-DD)")


def _check_json_text(name: str, value: Any) -> None:
    if isinstance(value, str) and not _text_ok(value):
        raise ValidationFailure(f"field '{name}' holds invalid text")
    if isinstance(value, list):
        for item in value:
            _check_json_text(name, item)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_json_text(name, key)
            _check_json_text(name, item)


def validate_body(entity: Entity, body: Any, creating: bool) -> dict[str, Any]:
    """The fields of a create or update body, checked one by one; None values mean `clear`.

    Raises ValidationFailure naming the first offending field.
    """
    if not isinstance(body, dict):
        raise ValidationFailure("request body must be a JSON object")
    cleaned: dict[str, Any] = {}
    for name, value in body.items():
        spec = _writable_field(entity, name, creating)
        if spec is None:
            continue
        if value is None:
            if name in entity.required:
                raise ValidationFailure(f"field '{name}' is required and cannot be null")
            if name in entity.defaults:  # the service gives every record one (a status): never cleared
                raise ValidationFailure(f"field '{name}' cannot be null (every {entity.name} has one)")
            if creating:
                continue
        else:
            _check_value(name, spec, value)
            if name in entity.required and value == "":
                raise ValidationFailure(f"field '{name}' must not be empty")
        cleaned[name] = value
    if creating:
        for name in entity.required:
            if name not in cleaned:
                raise ValidationFailure(f"field '{name}' is required")
    return cleaned


def _writable_field(entity: Entity, name: Any, creating: bool) -> Field | None:
    """The field `name` a body may write in this request; None when an update silently ignores it.

    Raises ValidationFailure when the field may not be sent here at all.
    """
    if not isinstance(name, str) or not _text_ok(name):
        raise ValidationFailure("field names must be text")
    if name in entity.refused:
        raise ValidationFailure(f"field '{name}' is not accepted: {entity.refused[name]}")
    if creating and name in entity.refused_on_create:
        raise ValidationFailure(f"field '{name}' is not accepted: {entity.refused_on_create[name]}")
    if not creating and name in entity.ignored_on_update:
        return None
    if not creating and name in entity.create_only:
        raise ValidationFailure(f"field '{name}' is only accepted on create")
    if name in entity.read_only:
        raise ValidationFailure(f"field '{name}' is read-only")
    spec = entity.fields.get(name)
    if spec is None:
        raise ValidationFailure(f"unknown field '{name}'")
    return spec
