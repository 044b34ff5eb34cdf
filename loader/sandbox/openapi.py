"""The OpenAPI 3.1 description served at /q/openapi.json, built from the entity table.

Built from the same `ENTITIES` the routes are, so a route cannot exist without being described.
"""

from __future__ import annotations

from typing import Any

from loader.sandbox.entities import ENTITIES, Entity, Field
from loader.sandbox.options import API_VERSION
from loader.sandbox.token_endpoint import TEMPLATE as TOKEN_PATH

_REF = "#/components/schemas/"
_USER = {
    "type": "object",
    "properties": {k: {"type": "string"} for k in ("id", "email_address", "first_name", "last_name")},
}
_STAMP = {"type": "object", "properties": {"time": {"type": "integer"}, "user": {"$ref": _REF + "User"}}}


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
        return {"$ref": _REF + "ParentRef"}
    if kind == "json":
        return {}
    return {"type": "string"}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if not schema:
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def _title(entity: Entity) -> str:
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
    properties["metadata"] = {"$ref": _REF + "Metadata"}
    if entity.collection == "credentials":
        properties["uploadedBy"] = {"$ref": _REF + "User"}
    if entity.collection == "comments":
        properties["suggestion_id"] = {"type": "string"}
    if entity.type_value:
        properties["children"] = {"type": "array", "items": {"$ref": _REF + "Child"}, "description": "get-one only"}
    if entity.collection == "applications":
        properties["comments"] = {"type": "array", "items": {"$ref": _REF + "Comment"}, "description": "get-one only"}
        properties["credit_matches"] = {"type": "array", "items": {"$ref": _REF + "CreditMatch"}}
    return {"type": "object", "properties": properties, "required": ["id", "metadata"]}


def _envelope(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "environment": {"type": "string"},
            "timestamp": {"type": "integer"},
            "version": {"type": "string"},
            "data": data,
        },
        "required": ["timestamp", "version", "data"],
    }


def _page(item: dict[str, Any]) -> dict[str, Any]:
    schema = _envelope({"type": "array", "items": item, "maxItems": 100})
    schema["properties"].update(
        total={"type": "integer"}, page_total={"type": "integer"}, page_token={"type": ["string", "null"]}
    )
    schema["required"] += ["total", "page_total", "page_token"]
    return schema


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*statuses: int) -> dict[str, Any]:
    text = {
        400: "ValidationError",
        401: "missing, malformed, expired or unknown token",
        404: "not found",
        405: "not allowed",
        409: "conflict with an existing record",
        429: "rate limited (Retry-After)",
        500: "server error (or injected fault)",
        503: "unavailable (injected fault)",
    }
    return {str(s): {"$ref": f"#/components/responses/E{s}"} for s in statuses if s in text}


_COMMON_ERRORS = (401, 429, 500, 503)


def _path_param(name: str = "id") -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _filters(entity: Entity) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = [
        {
            "name": "page_token",
            "in": "query",
            "required": False,
            "schema": {"type": "string"},
            "description": "from the previous page; the first request's filters travel with it",
        }
    ]
    for name, spec in entity.fields.items():
        if spec.kind in ("str", "enum", "date") or name == entity.ref_field:
            params.append(
                {
                    "name": name,
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string"},
                    "description": "equality filter (first page only)",
                }
            )
    return params


def _entity_paths(entity: Entity) -> dict[str, Any]:
    title = _title(entity)
    record = {"$ref": _REF + title}
    tag = [entity.collection]
    base_params = [_path_param()] if "{id}" in entity.path else []
    collection: dict[str, Any] = {
        "get": {
            "operationId": f"list_{entity.collection}",
            "tags": tag,
            "summary": f"List {entity.collection} (100 a page, keyset paged)",
            "parameters": base_params + _filters(entity),
            "responses": {"200": _json(_page(record), "a page"), **_errors(400, 404, *_COMMON_ERRORS)},
        }
    }
    if entity.creatable:
        collection["post"] = {
            "operationId": f"create_{entity.name}",
            "tags": tag,
            "summary": f"Create a {entity.name}",
            "parameters": base_params,
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": f"{_REF}{title}Create"}}},
            },
            "responses": {"201": _json(_envelope(record), "created"), **_errors(400, 404, 409, *_COMMON_ERRORS)},
        }
    paths = {entity.path: collection}
    if entity.collection == "comments":
        return paths
    item: dict[str, Any] = {
        "get": {
            "operationId": f"get_{entity.name}",
            "tags": tag,
            "summary": f"Get one {entity.name} by id" + (f" or {entity.key_field}" if entity.key_field else ""),
            "parameters": [_path_param()],
            "responses": {"200": _json(_envelope(record), "the record"), **_errors(404, *_COMMON_ERRORS)},
        }
    }
    if entity.updatable:
        item["patch"] = {
            "operationId": f"update_{entity.name}",
            "tags": tag,
            "summary": f"Update a {entity.name}: each field sent replaces the stored one; null clears it",
            "parameters": [_path_param()],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": f"{_REF}{title}Update"}}},
            },
            "responses": {"200": _json(_envelope(record), "updated"), **_errors(400, 404, 409, *_COMMON_ERRORS)},
        }
    paths[f"{entity.path}/{{id}}"] = item
    return paths


def _components() -> dict[str, Any]:
    schemas: dict[str, Any] = {
        "User": _USER,
        "Metadata": {"type": "object", "properties": {"created": _STAMP, "updated": _STAMP}},
        "ParentRef": {
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
            "additionalProperties": False,
        },
        "Child": {"type": "object", "properties": {k: {"type": "string"} for k in ("id", "code", "name", "type")}},
        "CreditMatch": {
            "type": "object",
            "properties": {k: {"type": ["string", "null"]} for k in ("suggestion_id", "subject_id", "credential_id")},
        },
        "Outcome": {
            "type": "object",
            "properties": {
                "application_id": {"type": "string"},
                "status": {"type": "string"},
                "decided": {"type": "boolean"},
                "credit_matches": {"type": "array", "items": {"$ref": _REF + "CreditMatch"}},
            },
        },
        "Error": {
            "type": "object",
            "properties": {
                "environment": {"type": "string"},
                "timestamp": {"type": "integer"},
                "message": {"type": "string"},
            },
            "required": ["environment", "timestamp", "message"],
        },
        "Token": {
            "type": "object",
            "properties": {
                "access_token": {"type": "string"},
                "expires_in": {"type": "number"},
                "token_type": {"type": "string"},
            },
            "required": ["access_token", "expires_in", "token_type"],
        },
        "Faults": {
            "type": "object",
            "properties": {
                "latency_ms": {"type": "number", "minimum": 0},
                "jitter_ms": {"type": "number", "minimum": 0},
                "error_rate": {"type": "number", "minimum": 0, "maximum": 1},
                "lost_rate": {"type": "number", "minimum": 0, "maximum": 1},
                "rate_limit": {"type": ["number", "null"], "exclusiveMinimum": 0},
                "seed": {"type": "integer"},
            },
            "additionalProperties": False,
        },
        "OAuthError": {
            "type": "object",
            "properties": {"error": {"type": "string"}, "error_description": {"type": "string"}},
        },
    }
    for entity in ENTITIES.values():
        title = _title(entity)
        schemas[title] = _record_schema(entity)
        if entity.creatable:
            schemas[f"{title}Create"] = _write_schema(entity, creating=True)
        if entity.updatable:
            schemas[f"{title}Update"] = _write_schema(entity, creating=False)
    error = {"application/json": {"schema": {"$ref": _REF + "Error"}}}
    responses = {
        f"E{status}": {"description": text, "content": error}
        for status, text in (
            (400, "ValidationError: <reason>"),
            (401, "Unauthorized"),
            (404, "Not found"),
            (409, "Conflict: names the existing record"),
            (429, "Too many requests"),
            (500, "Server error"),
            (503, "Unavailable"),
        )
    }
    security = {
        "bearer": {"type": "http", "scheme": "bearer"},
        "clientCredentials": {
            "type": "oauth2",
            "flows": {"clientCredentials": {"tokenUrl": TOKEN_PATH.replace("{realm}", "sandbox"), "scopes": {}}},
        },
    }
    return {"schemas": schemas, "responses": responses, "securitySchemes": security}


def _fixed_paths() -> dict[str, Any]:
    form = {
        "type": "object",
        "properties": {
            "grant_type": {"type": "string", "enum": ["client_credentials"]},
            "client_id": {"type": "string"},
            "client_secret": {"type": "string"},
        },
        "required": ["grant_type"],
    }
    oauth_error = {"$ref": _REF + "OAuthError"}
    apps = ENTITIES["applications"]
    return {
        TOKEN_PATH: {
            "post": {
                "operationId": "token",
                "tags": ["identity provider"],
                "summary": "Client-credentials access token",
                "security": [],
                "parameters": [_path_param("realm")],
                "requestBody": {"required": True, "content": {"application/x-www-form-urlencoded": {"schema": form}}},
                "responses": {
                    "200": _json({"$ref": _REF + "Token"}, "a token"),
                    "400": _json(oauth_error, "unsupported_grant_type or invalid_request"),
                    "401": _json(oauth_error, "invalid_client"),
                    "404": _json(oauth_error, "unknown realm"),
                },
            }
        },
        f"{apps.path}/{{id}}/outcome": {
            "get": {
                "operationId": "get_application_outcome",
                "tags": ["applications"],
                "parameters": [_path_param()],
                "responses": {
                    "200": _json(_envelope({"$ref": _REF + "Outcome"}), "outcome"),
                    **_errors(404, *_COMMON_ERRORS),
                },
            }
        },
        "/q/openapi.json": {
            "get": {
                "operationId": "openapi",
                "tags": ["sandbox"],
                "security": [],
                "responses": {"200": {"description": "this document"}},
            }
        },
        "/q/sandbox/stats": {
            "get": {
                "operationId": "stats",
                "tags": ["sandbox"],
                "security": [],
                "responses": {"200": {"description": "request and fault counters"}},
            }
        },
        "/q/sandbox/stats/reset": {
            "post": {
                "operationId": "reset_stats",
                "tags": ["sandbox"],
                "security": [],
                "responses": {"200": {"description": "counters zeroed"}},
            }
        },
        "/q/sandbox/faults": {
            "get": {
                "operationId": "get_faults",
                "tags": ["sandbox"],
                "security": [],
                "responses": {"200": _json({"$ref": _REF + "Faults"}, "current fault options")},
            },
            "post": {
                "operationId": "set_faults",
                "tags": ["sandbox"],
                "security": [],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": _REF + "Faults"}}},
                },
                "responses": {
                    "200": _json({"$ref": _REF + "Faults"}, "the new fault options"),
                    "400": {"$ref": "#/components/responses/E400"},
                },
            },
        },
        "/q/sandbox/outbox": {
            "get": {
                "operationId": "outbox",
                "tags": ["sandbox"],
                "security": [],
                "responses": {"200": {"description": "messages sent by send_email"}},
            }
        },
    }


def build_openapi() -> dict[str, Any]:
    """The whole description; `servers` is relative so it works on any host and port."""
    paths = _fixed_paths()
    for entity in ENTITIES.values():
        paths.update(_entity_paths(entity))
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Institution Data Service (local sandbox)",
            "version": API_VERSION,
            "description": "The loader's local sandbox of the Institution Data Service (contract section 8).",
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": _components(),
    }
