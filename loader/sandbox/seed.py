"""Seeding a new database from a JSON document (or dict).

Behaviour, exactly:
- The seed is applied only when the database holds no record at all (a new file or `:memory:`);
  a database that already has data is left untouched, whatever the seed says.
- The document maps an institution name to its collections: schools, courses, programs, subjects,
  tags, roles, applicants, credentials, arrangements, applications, suggestions, users (any may be
  missing; another key is an error). They are loaded in that order, each list in its own order,
  so a record may only reference records loaded before it.
- Each record goes through the same validation and cross-record rules as a create through the API,
  except that it may carry `id` (kept as is, else a new UUID), `metadata` (kept as is, else filled in
  with the load time and a "seed" user), and an arrangement may carry any `status`. Other
  read-only fields (curriculum `type` and `children`, credential `uploadedBy`...) in a seed record
  are ignored: the server sets them.
- Institutions named in the seed, and those of every client, that get no `roles` from the seed get
  three default roles (Administrator, Assessor, Viewer); those whose seed has no `tags` key get
  three default tags (International student, Domestic student, Recognition of prior learning), as the real
  platform has tags an API user cannot create.
- The whole seed is one transaction: any error (SeedError, naming the institution, collection and
  position) leaves the database empty.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from loader.sandbox.entities import ARRANGEMENT_STATUSES, ENTITIES, ValidationFailure, validate_body
from loader.sandbox.service import ApiError, Service, columns_of, now_ms
from loader.sandbox.store import Store

SEED_ORDER = (
    "schools",
    "courses",
    "programs",
    "subjects",
    "tags",
    "roles",
    "applicants",
    "credentials",
    "arrangements",
    "applications",
    "suggestions",
    "users",
)
DEFAULT_ROLES = (
    {"name": "Administrator", "description": "Full access", "permissions": ["read", "write", "admin"]},
    {"name": "Assessor", "description": "Assesses applications", "permissions": ["read", "assess"]},
    {"name": "Viewer", "description": "Read-only access", "permissions": ["read"]},
)
# The real platform comes with tags an API user cannot create (GET only); without a few here, a
# credential or application with tags could not be tried on a bare sandbox.
DEFAULT_TAGS = (
    {"name": "International student", "description": "Studying on a student visa"},
    {"name": "Domestic student", "description": "Citizen or permanent resident"},
    {"name": "Recognition of prior learning", "description": "Credit sought for earlier study or work"},
)
_SEED_USER = {
    "id": str(uuid.uuid5(uuid.NAMESPACE_URL, "sandbox-seed")),
    "email_address": "seed@sandbox.invalid",
    "first_name": "Seed",
    "last_name": "Data",
}


class SeedError(ValueError):
    """A seed that cannot be loaded; the message names the record."""


def read_seed(seed: str | Path | dict[str, Any] | None) -> dict[str, Any]:
    if seed is None:
        return {}
    if isinstance(seed, dict):
        return seed
    try:
        document = json.loads(Path(seed).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SeedError(f"cannot read seed {seed}: {exc}") from exc
    if not isinstance(document, dict):
        raise SeedError(f"seed {seed}: the top level must be an object of institutions")
    return document


def apply_seed(store: Store, service: Service, document: dict[str, Any], institutions: Iterable[str]) -> bool:
    """Load the seed if the database is empty; True if it was loaded."""
    if not store.is_empty():
        return False
    names = list(dict.fromkeys([*document, *institutions]))
    with store.transaction():
        for institution in names:
            collections = document.get(institution) or {}
            if not isinstance(collections, dict):
                raise SeedError(f"seed: '{institution}' must be an object of collections")
            unknown = sorted(set(collections) - set(SEED_ORDER))
            if unknown:
                raise SeedError(f"seed: {institution}: unknown collection '{unknown[0]}'")
            if not collections.get("roles"):
                collections = {**collections, "roles": list(DEFAULT_ROLES)}
            if "tags" not in collections:  # `"tags": []` asks for a sandbox without tags
                collections = {**collections, "tags": list(DEFAULT_TAGS)}
            for collection in SEED_ORDER:
                records = collections.get(collection) or []
                if not isinstance(records, list):
                    raise SeedError(f"seed: {institution}.{collection} must be a list")
                for position, raw in enumerate(records):
                    try:
                        _load_record(store, service, institution, collection, raw)
                    except (ValidationFailure, ApiError, sqlite3.IntegrityError) as exc:
                        message = exc.message if isinstance(exc, ApiError) else str(exc)
                        raise SeedError(f"seed: {institution}.{collection}[{position}]: {message}") from exc
    return True


def _load_record(store: Store, service: Service, institution: str, collection: str, raw: Any) -> None:
    entity = ENTITIES[collection]
    if not isinstance(raw, dict):
        raise ValidationFailure("a record must be an object")
    given = {k: v for k, v in raw.items() if k not in (*entity.read_only, "status")}
    fields = validate_body(entity, given, creating=True)
    fields.pop("send_email", None)
    stamp = {"time": now_ms(), "user": _SEED_USER}
    body: dict[str, Any] = {"id": str(raw.get("id") or uuid.uuid4())}
    if entity.type_value:
        body["type"] = entity.type_value
    body.update(entity.defaults)
    body.update(fields)
    if "status" in raw:
        spec = entity.fields.get("status")
        if spec is None:
            raise ValidationFailure("unknown field 'status'")
        choices = ARRANGEMENT_STATUSES if collection == "arrangements" else spec.choices
        if raw["status"] not in choices:
            raise ValidationFailure(f"field 'status' must be one of {', '.join(choices)}")
        body["status"] = raw["status"]
    if collection == "credentials":
        body["uploadedBy"] = _SEED_USER
    body["metadata"] = raw.get("metadata") or {"created": stamp, "updated": stamp}
    service.check_rules(institution, entity, body, None)
    cols = columns_of(entity, body)
    service.check_unique(institution, entity, body, cols)
    store.insert(institution, collection, body, cols)
