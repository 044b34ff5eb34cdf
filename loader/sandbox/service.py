"""The service's operations over the store: create, get, update, list; cross-record rules.

Rules between records (per institution; another institution's records are invisible, so a
reference to one is "does not exist"):
- curriculum `parent.id` names a curriculum record (any of the four types), never the record
  itself or one of its descendants;
- credential `applicant_id` names an applicant, `parent.id` (SUBJECT only, on create and update)
  names a credential, `type` never changes;
- arrangement `status` moves only along ARRANGEMENT_MOVES (same state: accepted, no change),
  `subjects_awarded` name subjects;
- application `applicant_id` names an applicant; `send_email: true` on create records a message in
  the outbox (the flag itself is not stored); suggestion `application_id`, `subject_id`,
  `credential_id` name their records; user `roles` name roles; every `tags` list names tags.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

from loader.sandbox.entities import ARRANGEMENT_MOVES, CURRICULUM, Entity, ValidationFailure, validate_body
from loader.sandbox.store import Columns, Filter, Row, Store
from loader.sandbox.tokens import Client

PAGE_SIZE = 100
_FILTERABLE_KINDS = ("str", "enum", "date")
# Per collection: (field, collection its id must name), checked in this order before the other rules.
_REFERENCES: dict[str, tuple[tuple[str, str], ...]] = {
    "credentials": (("applicant_id", "applicants"),),
    "applications": (("applicant_id", "applicants"),),
    "suggestions": (("application_id", "applications"), ("subject_id", "subjects"), ("credential_id", "credentials")),
}
# Per collection: (list field, collection each of its ids must name), checked after the other rules.
_LIST_REFERENCES: dict[str, tuple[tuple[str, str], ...]] = {
    "credentials": (("tags", "tags"),),
    "applications": (("tags", "tags"),),
    "arrangements": (("subjects_awarded", "subjects"),),
    "users": (("roles", "roles"),),
}


class ApiError(Exception):
    """An answer other than success: HTTP status and the body's message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def not_found(entity: Entity, key: str) -> ApiError:
    return ApiError(404, f"{entity.name} '{key}' not found")


def invalid(reason: str) -> ApiError:
    return ApiError(400, f"ValidationError: {reason}")


def now_ms() -> int:
    return int(time.time() * 1000)


def columns_of(entity: Entity, body: dict[str, Any]) -> Columns:
    code = body.get(entity.key_field) if entity.key_field else None
    ref: Any = body.get(entity.ref_field) if entity.ref_field else None
    if isinstance(ref, dict):
        ref = ref.get("id")
    ukey = f"{entity.unique}\x1f{code}" if entity.unique and code is not None else None
    return Columns(code=code, ukey=ukey, ref=ref)


def _label(body: dict[str, Any]) -> str:
    name = body.get("name")
    if name is None and ("first_name" in body or "last_name" in body):
        name = f"{body.get('first_name', '')} {body.get('last_name', '')}".strip()
    return f" '{name}'" if name is not None else ""


def service_users(clients: Sequence[Client]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per institution, the users of its clients by id: the people `metadata` names (staff-client's
    is "Robin Staff"), so a caller can read who changed a record (GET /institution/users/{id})."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for client in clients:
        user: dict[str, Any] = {**client.user, "identity_provider": "sso", "active": True, "roles": []}
        found.setdefault(client.institution, {})[user["id"]] = user
    return found


class Service:
    """Operations on behalf of an authenticated client; institution isolation happens here.
    `users`: the clients' own users by institution and id (`service_users`), read like stored users."""

    def __init__(self, store: Store, entities: dict[str, Entity],
                 users: dict[str, dict[str, dict[str, Any]]] | None = None) -> None:
        self._store = store
        self._entities = entities
        self._users = users or {}

    # -- reads -----------------------------------------------------------------------------
    def find(self, institution: str, entity: Entity, id_or_code: str) -> Row:
        row = self._store.get(institution, (entity.collection,), id_or_code)
        if row is None and entity.key_field:
            row = self._store.get_by_code(institution, entity.collection, id_or_code)
        if row is None:
            raise not_found(entity, id_or_code)
        return row

    def get(self, client: Client, entity: Entity, id_or_code: str) -> dict[str, Any]:
        """One record, with what only single-record answers carry (children, comments...)."""
        user = self._users.get(client.institution, {}).get(id_or_code) if entity.collection == "users" else None
        if user is not None:
            return dict(user)
        return self._with_details(client.institution, entity, self.find(client.institution, entity, id_or_code).body)

    def _with_details(self, institution: str, entity: Entity, body: dict[str, Any]) -> dict[str, Any]:
        body = dict(body)
        if entity.collection in CURRICULUM:
            children = self._store.by_ref(institution, CURRICULUM, body["id"])
            body["children"] = [{k: c.body.get(k) for k in ("id", "code", "name", "type")} for c in children]
        elif entity.collection == "applications":
            body.update(self._application_details(institution, body["id"]))
        return body

    def _application_details(self, institution: str, application_id: str) -> dict[str, Any]:
        suggestions = self._store.by_ref(institution, ("suggestions",), application_id)
        comments: list[dict[str, Any]] = []
        for suggestion in suggestions:
            comments.extend(c.body for c in self._store.by_ref(institution, ("comments",), suggestion.body["id"]))
        matches = [
            {
                "suggestion_id": s.body["id"],
                "subject_id": s.body.get("subject_id"),
                "credential_id": s.body.get("credential_id"),
            }
            for s in suggestions
            if s.body.get("status") == "ACCEPTED"
        ]
        return {"comments": comments, "credit_matches": matches}

    def outcome(self, client: Client, entity: Entity, application_id: str) -> dict[str, Any]:
        body = self.find(client.institution, entity, application_id).body
        details = self._application_details(client.institution, body["id"])
        status = body.get("status", "SUBMITTED")
        return {
            "application_id": body["id"],
            "status": status,
            "decided": status in ("OFFERED", "DECLINED", "WITHDRAWN"),
            "credit_matches": details["credit_matches"],
        }

    def filters(self, entity: Entity, params: Sequence[tuple[str, str]]) -> dict[str, str]:
        """Equality filters of a first list request: top-level text fields of the entity."""
        found: dict[str, str] = {}
        for name, value in params:
            if name == "page_token":
                continue
            spec = entity.fields.get(name)
            allowed = name == "id" or (
                spec is not None and (spec.kind in _FILTERABLE_KINDS or name == entity.ref_field)
            )
            if not allowed:
                raise invalid(f"unknown filter '{name}'")
            if name in found:
                raise invalid(f"filter '{name}' given more than once")
            found[name] = value
        return found

    def page(
        self, institution: str, entity: Entity, filters: dict[str, str], after: int, base: Sequence[Filter] = ()
    ) -> tuple[list[tuple[int, str]], int]:
        """(seq, body text) of one page after position `after`, and the filtered total."""
        sql_filters = [*base, *(self._sql_filter(entity, k, v) for k, v in sorted(filters.items()))]
        rows = self._store.page(institution, entity.collection, sql_filters, after, PAGE_SIZE)
        return rows, self._store.count(institution, entity.collection, sql_filters)

    @staticmethod
    def _sql_filter(entity: Entity, name: str, value: str) -> Filter:
        if name == entity.key_field:
            return ("code", value)
        if name == entity.ref_field:
            return ("ref", value)
        if name == "id":
            return ("id", value)
        return (f"json_extract(body, '$.{name}')", value)  # name is a field of the entity, never user text

    # -- writes ----------------------------------------------------------------------------
    def create(
        self, client: Client, entity: Entity, payload: Any, extra: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        if not entity.creatable:
            raise ApiError(405, f"{entity.name} records cannot be created through the API")
        try:
            fields = validate_body(entity, payload, creating=True)
        except ValidationFailure as exc:
            raise invalid(str(exc)) from None
        send_email = bool(fields.pop("send_email", False))
        stamp = {"time": now_ms(), "user": client.user}
        body: dict[str, Any] = {"id": str(uuid.uuid4())}
        if entity.type_value:
            body["type"] = entity.type_value
        body.update(entity.defaults)
        body.update(extra or {})
        body.update(fields)
        if entity.collection == "credentials":
            body["uploadedBy"] = client.user
        body["metadata"] = {"created": stamp, "updated": stamp}
        self.check_rules(client.institution, entity, body, None)
        cols = columns_of(entity, body)
        self.check_unique(client.institution, entity, body, cols)
        self._store.insert(client.institution, entity.collection, body, cols)
        if send_email:
            self._send_confirmation(client.institution, body)
        if entity.collection in CURRICULUM:
            # A record just created has a new id, so nothing refers to it yet: no children to look up.
            return {**body, "children": []}
        return self._with_details(client.institution, entity, body)

    def update(self, client: Client, entity: Entity, record_id: str, payload: Any) -> dict[str, Any]:
        if not entity.updatable:
            raise ApiError(405, f"{entity.name} records cannot be updated through the API")
        current = self._store.get(client.institution, (entity.collection,), record_id)
        if current is None:
            raise not_found(entity, record_id)
        try:
            fields = validate_body(entity, payload, creating=False)
        except ValidationFailure as exc:
            raise invalid(str(exc)) from None
        body = dict(current.body)
        for name, value in fields.items():
            if value is None:
                body.pop(name, None)
            else:
                body[name] = value
        self.check_rules(client.institution, entity, body, current.body)
        body["metadata"] = {**body.get("metadata", {}), "updated": {"time": now_ms(), "user": client.user}}
        cols = columns_of(entity, body)
        if cols.ukey != columns_of(entity, current.body).ukey:  # an unchanged unique key is this record's own
            self.check_unique(client.institution, entity, body, cols)
        self._store.update(record_id, body, cols)
        return self._with_details(client.institution, entity, body)

    def check_rules(
        self, institution: str, entity: Entity, body: dict[str, Any], before: dict[str, Any] | None
    ) -> None:
        """Cross-record rules of a record about to be written (`before` is None on create)."""
        kind = entity.collection
        if kind in CURRICULUM and "parent" in body:
            self._check_curriculum_parent(institution, body)
        for field_name, target in _REFERENCES.get(kind, ()):
            if field_name in body:
                self._require(institution, target, body[field_name], field_name)
        if kind == "credentials":
            self._check_credential(institution, body, before)
        if kind == "arrangements" and before is not None and body["status"] != before["status"]:
            if body["status"] not in ARRANGEMENT_MOVES[before["status"]]:
                raise invalid(f"status cannot move from {before['status']} to {body['status']}")
        for field_name, target in _LIST_REFERENCES.get(kind, ()):
            for record_id in body.get(field_name, []):
                self._require(institution, target, record_id, field_name)

    def _check_credential(self, institution: str, body: dict[str, Any], before: dict[str, Any] | None) -> None:
        """A credential's `type` never changes; only a SUBJECT credential has a `parent`, a credential."""
        if before is not None and body["type"] != before["type"]:
            raise invalid(f"field 'type' cannot be changed ({before['type']} -> {body['type']})")
        if "parent" in body:
            if body["type"] != "SUBJECT":
                raise invalid(f"field 'parent' is only accepted for SUBJECT credentials, not {body['type']}")
            self._require(institution, "credentials", body["parent"]["id"], "parent")

    def _require(self, institution: str, collection: str, record_id: str, field_name: str) -> None:
        if self._store.get(institution, (collection,), record_id) is None:
            raise invalid(f"field '{field_name}': no {collection[:-1]} with id '{record_id}'")

    def _check_curriculum_parent(self, institution: str, body: dict[str, Any]) -> None:
        parent_id = body["parent"]["id"]
        seen = {body["id"]}
        current: str | None = parent_id
        while current is not None:
            if current in seen:
                raise invalid("field 'parent': a record cannot be its own ancestor")
            row = self._store.get(institution, CURRICULUM, current)
            if row is None:
                raise invalid(f"field 'parent': no curriculum record with id '{current}'")
            seen.add(current)
            parent = row.body.get("parent")
            current = parent.get("id") if isinstance(parent, dict) else None

    def check_unique(self, institution: str, entity: Entity, body: dict[str, Any], cols: Columns) -> None:
        if cols.ukey is None:
            return
        holder = self._store.get_by_ukey(institution, cols.ukey)
        if holder is not None and holder.body["id"] != body["id"]:
            held = holder.body
            kind = (
                held.get("type") if holder.collection in CURRICULUM else self._entities[holder.collection].name.upper()
            )
            raise ApiError(
                409,
                f"Conflict: {entity.key_field} '{cols.code}' is already used by {kind} {held['id']}{_label(held)}",
            )

    def _send_confirmation(self, institution: str, application: dict[str, Any]) -> None:
        applicant = self._store.get(institution, ("applicants",), application["applicant_id"])
        to = applicant.body.get("email_address") if applicant else None
        self._store.add_outbox(
            institution,
            {
                "to": to,
                "subject": "Your application has been received",
                "application_id": application["id"],
                "applicant_id": application["applicant_id"],
                "time": now_ms(),
            },
        )
