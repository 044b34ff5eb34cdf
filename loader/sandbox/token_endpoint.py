"""The identity provider's client-credentials token endpoint, Keycloak style.

`POST /realms/{realm}/protocol/openid-connect/token` with a form body (grant_type,
client_id, client_secret; the client may instead authenticate with HTTP Basic). Answers:
200 `{access_token, expires_in, token_type: "Bearer", ...}`; 400 `unsupported_grant_type` for
another grant, 400 `invalid_request` for a missing grant or a body that is not a form;
401 `invalid_client` for an unknown client or a wrong secret; 404 for another realm.
Faults: latency only.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from loader.sandbox.http import json_response, read_raw
from loader.sandbox.service import ApiError

if TYPE_CHECKING:
    from loader.sandbox.app import SandboxState

TEMPLATE = "/realms/{realm}/protocol/openid-connect/token"


def _oauth_error(status: int, error: str, description: str) -> Response:
    return json_response({"error": error, "error_description": description}, status)


def _basic_credentials(request: Request) -> tuple[str, str] | None:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        client_id, _, secret = base64.b64decode(value, validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return client_id, secret


def route(state: SandboxState, realm: str) -> Route:
    async def token(request: Request) -> Response:
        state.count(f"POST {TEMPLATE}")
        delay = state.faults.for_token_request().delay_s
        if delay:
            await asyncio.sleep(delay)
        if request.path_params["realm"] != realm:
            return _oauth_error(404, "invalid_request", "Realm does not exist")
        try:
            raw = await read_raw(request, limit=64 * 1024)
            form = dict(parse_qsl(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(raw.strip())))
        except (ApiError, UnicodeDecodeError, ValueError):
            return _oauth_error(400, "invalid_request", "the body must be an application/x-www-form-urlencoded form")
        grant = form.get("grant_type")
        if not grant:
            return _oauth_error(400, "invalid_request", "Missing form parameter: grant_type")
        if grant != "client_credentials":
            return _oauth_error(400, "unsupported_grant_type", f"Unsupported grant_type: {grant}")
        basic = _basic_credentials(request)
        client_id, secret = basic or (form.get("client_id", ""), form.get("client_secret", ""))
        client = state.tokens.authenticate(client_id, secret)
        if client is None:
            return _oauth_error(401, "invalid_client", "Invalid client or Invalid client credentials")
        ttl = state.tokens.ttl
        return json_response(
            {
                "access_token": state.tokens.issue(client),
                "expires_in": int(ttl) if float(ttl).is_integer() else ttl,
                "refresh_expires_in": 0,
                "token_type": "Bearer",
                "not-before-policy": 0,
                "scope": "profile email",
            },
            headers={"Cache-Control": "no-store", "Pragma": "no-cache"},
        )

    return Route(TEMPLATE, token, methods=["POST"])
