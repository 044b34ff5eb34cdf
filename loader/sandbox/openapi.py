"""The OpenAPI 3.1 description served at /q/openapi.json, built from the entity table.

Built from the same `ENTITIES` the routes are, so a route cannot exist without being described.
"""

from __future__ import annotations

from typing import Any

from loader.sandbox.entities import ENTITIES, Entity
from loader.sandbox.openapi_schemas import REF, components, schema_name
from loader.sandbox.options import API_VERSION
from loader.sandbox.token_endpoint import TEMPLATE as TOKEN_PATH


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
    title = schema_name(entity)
    record = {"$ref": REF + title}
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
                "content": {"application/json": {"schema": {"$ref": f"{REF}{title}Create"}}},
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
                "content": {"application/json": {"schema": {"$ref": f"{REF}{title}Update"}}},
            },
            "responses": {"200": _json(_envelope(record), "updated"), **_errors(400, 404, 409, *_COMMON_ERRORS)},
        }
    paths[f"{entity.path}/{{id}}"] = item
    return paths


def _token_path() -> dict[str, Any]:
    form = {
        "type": "object",
        "properties": {
            "grant_type": {"type": "string", "enum": ["client_credentials"]},
            "client_id": {"type": "string"},
            "client_secret": {"type": "string"},
        },
        "required": ["grant_type"],
    }
    oauth_error = {"$ref": REF + "OAuthError"}
    token = {
        "operationId": "token",
        "tags": ["identity provider"],
        "summary": "Client-credentials access token",
        "security": [],
        "parameters": [_path_param("realm")],
        "requestBody": {"required": True, "content": {"application/x-www-form-urlencoded": {"schema": form}}},
        "responses": {
            "200": _json({"$ref": REF + "Token"}, "a token"),
            "400": _json(oauth_error, "unsupported_grant_type or invalid_request"),
            "401": _json(oauth_error, "invalid_client"),
            "404": _json(oauth_error, "unknown realm"),
        },
    }
    return {TOKEN_PATH: {"post": token}}


def _outcome_path() -> dict[str, Any]:
    outcome = {
        "operationId": "get_application_outcome",
        "tags": ["applications"],
        "parameters": [_path_param()],
        "responses": {
            "200": _json(_envelope({"$ref": REF + "Outcome"}), "outcome"),
            **_errors(404, *_COMMON_ERRORS),
        },
    }
    return {f"{ENTITIES['applications'].path}/{{id}}/outcome": {"get": outcome}}


def _sandbox_operation(
    operation_id: str, responses: dict[str, Any], *, public: bool = True, **more: Any
) -> dict[str, Any]:
    """An operation of the sandbox's own routes (/q/...); `public`: no token needed."""
    security: dict[str, Any] = {"security": []} if public else {}
    return {"operationId": operation_id, "tags": ["sandbox"], **security, **more, "responses": responses}


def _sandbox_paths() -> dict[str, Any]:
    faults = {"$ref": REF + "Faults"}
    outbox = _sandbox_operation(
        "outbox",
        {"200": {"description": "messages sent by send_email"}, "401": {"$ref": "#/components/responses/E401"}},
        public=False,  # the caller's token says whose outbox: the document's default security
        description="The e-mails `send_email` would have sent, of the caller's institution only.",
    )
    return {
        "/q/openapi.json": {"get": _sandbox_operation("openapi", {"200": {"description": "this document"}})},
        "/q/sandbox/stats": {
            "get": _sandbox_operation("stats", {"200": {"description": "request and fault counters"}})
        },
        "/q/sandbox/stats/reset": {
            "post": _sandbox_operation("reset_stats", {"200": {"description": "counters zeroed"}})
        },
        "/q/sandbox/faults": {
            "get": _sandbox_operation("get_faults", {"200": _json(faults, "current fault options")}),
            "post": _sandbox_operation(
                "set_faults",
                {"200": _json(faults, "the new fault options"), "400": {"$ref": "#/components/responses/E400"}},
                requestBody={"required": True, "content": {"application/json": {"schema": faults}}},
            ),
        },
        "/q/sandbox/outbox": {"get": outbox},
    }


def _fixed_paths() -> dict[str, Any]:
    """The routes not of an entity: the token endpoint, an application's outcome, the sandbox's own."""
    return {**_token_path(), **_outcome_path(), **_sandbox_paths()}


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
        "components": components(),
    }
