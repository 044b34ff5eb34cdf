"""Component schemas of the OpenAPI description: records, create/update bodies, errors.

Built from `ENTITIES`, the same table the server validates with, so they cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from loader.sandbox.entities import ENTITIES, Entity, Field
from loader.sandbox.faults import faults_schema
from loader.sandbox.token_endpoint import TEMPLATE as TOKEN_PATH

REF = "#/components/schemas/"
_USER = {
    "type": "object",
    "properties": {k: {"type": "string"} for k in ("id", "email_address", "first_name", "last_name")},
}
_STAMP = {"type": "object", "properties": {"time": {"type": "integer"}, "user": {"$ref": REF + "User"}}}


def _field_schema(spec: Field) -> dict[str, Any]:
    kind = spec.kind
    if kind == "enum":
        return {"type": "string", "enum": list(spec.choices)}
    if kind == "date":
        return {"type": "string", "format": "date"}
    if kind == "num_or_str":
        return {"type": ["string", "number"]}
    if kind == "bool":
        return {"type": "boolean"}
    if kind == "str_list":
        return {"type": "array", "items": {"type": "string"}}
    if kind == "attrs":
        return {"type": "object", "additionalProperties": {"type": "string"}}
    if kind == "object_id":
        return {"$ref": REF + "ParentRef"}
    if kind == "json":
        return {}
    return {"type": "string"}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if not schema:
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def schema_name(entity: Entity) -> str:
    return entity.name.capitalize()


def _write_schema(entity: Entity, creating: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name, spec in entity.fields.items():
        if creating and name in entity.refused_on_create:
            continue
        if not creating and name in entity.create_only:
            continue
        schema = _field_schema(spec)
        if name in entity.required:
            if spec.kind == "str":
                schema = {**schema, "minLength": 1}
            properties[name] = schema
        else:
            properties[name] = _nullable(schema)
    if not creating:
        for name in entity.ignored_on_update:
            properties[name] = {"type": "string", "description": "accepted and ignored (read-only after create)"}
    body: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if creating and entity.required:
        body["required"] = list(entity.required)
    return body


def _record_schema(entity: Entity) -> dict[str, Any]:
    properties: dict[str, Any] = {"id": {"type": "string"}}
    if entity.type_value:
        properties["type"] = {"type": "string", "const": entity.type_value}
    properties.update({name: _field_schema(spec) for name, spec in entity.fields.items() if name != "send_email"})
    properties["metadata"] = {"$ref": REF + "Metadata"}
    if entity.collection == "credentials":
        properties["uploadedBy"] = {"$ref": REF + "User"}
    if entity.collection == "comments":
        properties["suggestion_id"] = {"type": "string"}
    if entity.type_value:
        properties["children"] = {"type": "array", "items": {"$ref": REF + "Child"}, "description": "get-one only"}
    if entity.collection == "applications":
        properties["comments"] = {"type": "array", "items": {"$ref": REF + "Comment"}, "description": "get-one only"}
        properties["credit_matches"] = {"type": "array", "items": {"$ref": REF + "CreditMatch"}}
    return {"type": "object", "properties": properties, "required": ["id", "metadata"]}


def _strings(*names: str, nullable: bool = False) -> dict[str, Any]:
    kind: Any = ["string", "null"] if nullable else "string"
    return {name: {"type": kind} for name in names}


def _object(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def _shared_schemas() -> dict[str, Any]:
    """The schemas not of an entity: users and metadata, references, outcomes, errors, tokens, faults."""
    return {
        "User": _USER,
        "Metadata": _object({"created": _STAMP, "updated": _STAMP}),
        "ParentRef": {**_object(_strings("id"), "id"), "additionalProperties": False},
        "Child": _object(_strings("id", "code", "name", "type")),
        "CreditMatch": _object(_strings("suggestion_id", "subject_id", "credential_id", nullable=True)),
        "Outcome": _object(
            {
                **_strings("application_id", "status"),
                "decided": {"type": "boolean"},
                "credit_matches": {"type": "array", "items": {"$ref": REF + "CreditMatch"}},
            }
        ),
        "Error": _object(
            {"environment": {"type": "string"}, "timestamp": {"type": "integer"}, "message": {"type": "string"}},
            "environment", "timestamp", "message",
        ),
        "Token": _object(
            {"access_token": {"type": "string"}, "expires_in": {"type": "number"}, "token_type": {"type": "string"}},
            "access_token", "expires_in", "token_type",
        ),
        "Faults": faults_schema(),
        "OAuthError": _object(_strings("error", "error_description")),
    }


def _entity_schemas() -> dict[str, Any]:
    """Per entity: its record, and the bodies of its create and update where it has them."""
    schemas: dict[str, Any] = {}
    for entity in ENTITIES.values():
        title = schema_name(entity)
        schemas[title] = _record_schema(entity)
        if entity.creatable:
            schemas[f"{title}Create"] = _write_schema(entity, creating=True)
        if entity.updatable:
            schemas[f"{title}Update"] = _write_schema(entity, creating=False)
    return schemas


_ERROR_RESPONSES = (
    (400, "ValidationError: <reason>"),
    (401, "Unauthorized"),
    (404, "Not found"),
    (409, "Conflict: names the existing record"),
    (429, "Too many requests"),
    (500, "Server error"),
    (503, "Unavailable"),
)


def components() -> dict[str, Any]:
    error = {"application/json": {"schema": {"$ref": REF + "Error"}}}
    responses = {f"E{status}": {"description": text, "content": error} for status, text in _ERROR_RESPONSES}
    security = {
        "bearer": {"type": "http", "scheme": "bearer"},
        "clientCredentials": {
            "type": "oauth2",
            "flows": {"clientCredentials": {"tokenUrl": TOKEN_PATH.replace("{realm}", "sandbox"), "scopes": {}}},
        },
    }
    schemas = {**_shared_schemas(), **_entity_schemas()}
    return {"schemas": schemas, "responses": responses, "securitySchemes": security}
