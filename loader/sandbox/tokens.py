"""Clients, access tokens and page tokens.

Access tokens are opaque random strings held server side (client, expiry); they die with the
server. Page tokens are self-contained but signed with a key drawn when the app starts, so a forged
or altered token (or one of another server run) fails the signature and is refused as 400.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
import uuid
from dataclasses import dataclass
from functools import cached_property
from typing import Any


@dataclass(frozen=True)
class Person:
    """The names of a client's service user when it stands for a person editing in the platform."""

    first_name: str
    last_name: str
    email_address: str


@dataclass(frozen=True)
class Client:
    """A client of the identity provider: one institution, one service user for `metadata`."""

    client_id: str
    secret: str
    institution: str
    person: Person | None = None  # None: a service user named after the client

    @property
    def user(self) -> dict[str, str]:
        return dict(self._user)  # a copy: it goes into stored bodies

    @cached_property
    def _user(self) -> dict[str, str]:
        # Every write stamps it into `metadata`: worked out once per client, not per request.
        person = self.person or Person("Service", self.client_id, f"{self.client_id}@service.sandbox.invalid")
        return {
            "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"sandbox-client:{self.client_id}")),
            "email_address": person.email_address,
            "first_name": person.first_name,
            "last_name": person.last_name,
        }


# staff-client stands for a person editing records in the platform's own interface, so tests and
# demos can make platform edits that are not the loader's (contract sections 8 and 10).
STAFF_PERSON = Person("Robin", "Staff", "robin.staff@institution-a.sandbox.invalid")
DEFAULT_CLIENTS: tuple[Client, ...] = (
    Client("sandbox-client", "sandbox-secret", "institution-a"),
    Client("other-client", "other-secret", "institution-b"),
    Client("staff-client", "staff-secret", "institution-a", STAFF_PERSON),
)


class AccessTokens:
    """Issued access tokens, by value. Owned by one app."""

    def __init__(self, clients: tuple[Client, ...], ttl: float) -> None:
        self._clients = {c.client_id: c for c in clients}
        self._ttl = ttl
        self._tokens: dict[str, tuple[Client, float]] = {}

    @property
    def ttl(self) -> float:
        return self._ttl

    def authenticate(self, client_id: str, secret: str) -> Client | None:
        client = self._clients.get(client_id)
        if client is None or not hmac.compare_digest(client.secret.encode(), secret.encode()):
            return None
        return client

    def issue(self, client: Client) -> str:
        now = time.monotonic()
        if len(self._tokens) > 10_000:  # bound memory on long runs: forget expired tokens
            self._tokens = {t: v for t, v in self._tokens.items() if v[1] > now}
        token = secrets.token_urlsafe(32)
        self._tokens[token] = (client, now + self._ttl)
        return token

    def resolve(self, token: str) -> tuple[Client | None, str]:
        """The client of a live token, else None and why (unknown, expired)."""
        entry = self._tokens.get(token)
        if entry is None:
            return None, "unknown access token"
        client, expires = entry
        if time.monotonic() >= expires:
            return None, "access token expired"
        return client, ""


class PageTokenError(ValueError):
    """A page token that cannot be used (forged, altered, expired, another collection)."""


class PageTokens:
    """Signs and checks page tokens: (collection, institution, filters, last position, issued-at)."""

    def __init__(self, ttl: float) -> None:
        self._key = secrets.token_bytes(32)
        self._ttl = ttl

    def _sign(self, payload: bytes) -> str:
        return hmac.new(self._key, payload, hashlib.sha256).hexdigest()[:32]

    def make(self, collection: str, institution: str, filters: dict[str, Any], after: int) -> str:
        body = json.dumps([collection, institution, filters, after, time.time()], separators=(",", ":"))
        payload = base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")
        return f"{payload}.{self._sign(payload.encode())}"

    def read(self, token: str, collection: str, institution: str) -> tuple[dict[str, Any], int]:
        """(filters, last position) of a valid token for this collection and institution."""
        if not token.isascii():
            raise PageTokenError("invalid page token")
        payload, _, signature = token.partition(".")
        if not signature or not hmac.compare_digest(signature, self._sign(payload.encode())):
            raise PageTokenError("invalid page token")
        try:
            body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            token_collection, token_institution, filters, after, issued = body
        except (ValueError, TypeError) as exc:
            raise PageTokenError("invalid page token") from exc
        if token_collection != collection or token_institution != institution:
            raise PageTokenError("page token does not belong to this collection")
        if time.time() - issued > self._ttl:
            raise PageTokenError("page token expired")
        return filters, after
