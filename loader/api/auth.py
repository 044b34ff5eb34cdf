"""OAuth 2.0 client-credentials tokens (spec section 5), as a small `httpx.Auth`.

One token is kept in memory and renewed at max(ttl - 60, ttl / 2) seconds after it was requested
(`expires_in` is read from every answer, never assumed), and renewed once on a 401. Renewal happens
under an asyncio.Lock inside the auth flow, so concurrent requests that find the token stale share
one token request. The token request is yielded through the same client (and so through the same
transport, logging and counters) but never logged beyond its method, path and status.

Why not a library: Authlib's AsyncOAuth2Client switches to `httpx2` silently when installed and its
60 s leeway makes every call fetch a token when `expires_in` is short; httpx-auth fetches tokens with
a blocking client inside the flow (it stalls the event loop). See shared/design/libraries.md.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
from collections.abc import AsyncGenerator, Callable, Generator, Iterable

import httpx

from loader.api.errors import TokenError
from loader.config import Secret
from loader.errors import ProfileError
from loader.redaction import register_secret

TOKEN_REQUEST = "loader_token_request"  # request extension marking the token request
RENEW_MARGIN_S = 60.0
_SENDABLE_TOKEN = re.compile(r"[\x21-\x7e]+")  # printable ASCII, no space: what a header value carries as is

INVALID_CLIENT_HINT = "wrong client_id or client_secret, or the secret was rotated: ask the platform operator"


class TokenUnavailable(TokenError):
    """The identity provider failed (5xx, 429): worth retrying, unlike a refusal."""


class TokenAuth(httpx.Auth):
    """Bearer tokens from `token_url` for one client; renewed before expiry and once on a 401."""

    def __init__(
        self,
        token_url: str,
        client_id: str,
        client_secret: Secret,
        *,
        clock: Callable[[], float] = time.monotonic,
        allowed_origins: Iterable[str] = (),
    ):
        self._token_url = token_url
        # The token goes to these origins only (base_url's and auth_url's); empty: the token URL's.
        self._origins = frozenset(origin_of(u) for u in allowed_origins) or frozenset({origin_of(token_url)})
        self._client_id = client_id
        self._client_secret = client_secret
        self._clock = clock
        self._lock = asyncio.Lock()
        self._token: str | None = None
        self._renew_at = 0.0
        self._generation = 0
        self.lifetime_s: float | None = None

    @property
    def token_url(self) -> str:
        return self._token_url

    def service_user(self) -> str | None:
        """The user the token names, when it is a JWT that says (Keycloak: `preferred_username`)."""
        parts = (self._token or "").split(".")
        if len(parts) != 3:
            return None
        try:
            claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
        except (ValueError, TypeError):
            return None
        if not isinstance(claims, dict):
            return None
        for name in ("preferred_username", "email", "client_id"):
            if isinstance(claims.get(name), str):
                return str(claims[name])
        return None

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("TokenAuth works with httpx.AsyncClient only")
        yield request  # pragma: no cover - makes this a generator, as httpx expects

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if self._stale():
            async with self._lock:
                if self._stale():
                    sent_at = self._clock()
                    token_response = yield self._token_request()
                    await token_response.aread()
                    self._accept(token_response, sent_at)
        self.check_origin(request.url)
        generation = self._generation
        request.headers["Authorization"] = f"Bearer {self._token}"
        response = yield request
        if response.status_code != 401:
            return
        async with self._lock:
            # Another request may have renewed while this one was in flight: use its token.
            if self._generation == generation:
                sent_at = self._clock()
                token_response = yield self._token_request()
                await token_response.aread()
                self._accept(token_response, sent_at)
        request.headers["Authorization"] = f"Bearer {self._token}"
        yield request

    def check_origin(self, url: httpx.URL) -> None:
        """Refuse to attach the token to a request for any other origin than the environment's."""
        # From the parsed URL's parts, not by parsing its text again (a page token makes it long).
        origin = _origin(url)
        if origin not in self._origins:
            raise ProfileError(
                f"refusing to send the access token to {origin}: only base_url and auth_url receive it; "
                "nothing was sent",
                hint="every path in the profile (loader.yaml `profile:`) must be a path on the service, not an address",
            )

    def _stale(self) -> bool:
        return self._token is None or self._clock() >= self._renew_at

    def _token_request(self) -> httpx.Request:
        return httpx.Request(
            "POST",
            self._token_url,
            data={
                "grant_type": "client_credentials",
                "client_id": self._client_id,
                "client_secret": self._client_secret.reveal(),
            },
            headers={"Accept": "application/json"},
            extensions={TOKEN_REQUEST: True},
        )

    def _accept(self, response: httpx.Response, sent_at: float) -> None:
        where = {"method": "POST", "path": httpx.URL(self._token_url).path}
        body = _json_or_none(response)
        if response.status_code != 200:
            raise _token_error(response.status_code, body, where)
        fields: dict[str, object] = body if isinstance(body, dict) else {}
        token = fields.get("access_token")
        if not isinstance(token, str) or not token:
            raise TokenError("the identity provider answered without an access_token", **where)
        if not _SENDABLE_TOKEN.fullmatch(token):
            # A CR or LF would split the Authorization header (a header injection); never sent.
            raise TokenError(
                "the identity provider issued an access_token that cannot be sent in a header "
                "(it holds a space, a line break or another character outside printable ASCII); nothing was sent",
                hint="check auth_url and realm in loader.yaml; if they are right, report it to the platform operator",
                **where,
            )
        token_type = fields.get("token_type", "Bearer")
        if not isinstance(token_type, str) or token_type.lower() != "bearer":
            raise TokenError(f"the identity provider issued a {token_type!r} token, not a Bearer token", **where)
        lifetime = fields.get("expires_in")
        if isinstance(lifetime, int | float) and not isinstance(lifetime, bool) and 0 < lifetime < float("inf"):
            self.lifetime_s = float(lifetime)
            self._renew_at = sent_at + max(lifetime - RENEW_MARGIN_S, lifetime / 2)
        else:
            # No lifetime given: keep the token until the service refuses it (renewed on a 401).
            self.lifetime_s = None
            self._renew_at = float("inf")
        register_secret(token)  # hidden from every message and log from now on
        self._token = token
        self._generation += 1


def origin_of(url: str) -> str:
    """`scheme://host:port` of `url` (default ports made explicit), to compare where requests go."""
    return _origin(httpx.URL(url))


def _origin(url: httpx.URL) -> str:
    port = url.port or {"https": 443, "http": 80}.get(url.scheme, 0)
    return f"{url.scheme}://{url.host}:{port}"


def _json_or_none(response: httpx.Response) -> object:
    try:
        return response.json()
    except ValueError:
        return None


def _token_error(status: int, body: object, where: dict[str, str]) -> TokenError:
    error = body.get("error") if isinstance(body, dict) else None
    description = body.get("error_description") if isinstance(body, dict) else None
    detail = f"{error}" + (f" ({description})" if description else "") if error else f"HTTP {status}"
    if error == "invalid_client":
        return TokenError(f"the identity provider refused the client: {detail}", hint=INVALID_CLIENT_HINT, **where)
    if status == 429 or status >= 500:
        return TokenUnavailable(f"the identity provider failed: {detail}", **where)
    if error == "unauthorized_client":
        return TokenError(
            f"the identity provider refused the client: {detail}",
            hint="this client may not use the client-credentials grant: ask the platform operator",
            **where,
        )
    if status == 404:
        return TokenError(
            f"no token endpoint at this address: {detail}",
            hint="check auth_url and realm in loader.yaml",
            **where,
        )
    return TokenError(f"the identity provider refused the token request: {detail}", **where)
