"""Who a user id is: the service's users collection read one id at a time (GET /institution/users/{id}),
so reports can name the person who changed a record in the platform instead of an id.

Only the ids a plan names are fetched, each once, side by side within the client's concurrency
limit; an id the service does not know (404), or a users collection the client may not read (403),
is left out, and reports show the id itself: who changed a record is worth a request, not a failed plan.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from loader.api.client import ApiClient
from loader.api.errors import Forbidden

USER_ENTITY = "user"


@dataclass(frozen=True)
class User:
    """A service user as reports name them."""

    id: str
    first_name: str
    last_name: str
    email_address: str

    @property
    def name(self) -> str:
        """First and last name; the id when the service gives no name (never the e-mail address:
        names are printed, and an address is shown only where `editors: email` asks for it)."""
        return f"{self.first_name} {self.last_name}".strip() or self.id


async def fetch_users(client: ApiClient, ids: Iterable[str]) -> dict[str, User]:
    """The users of `ids` the service knows, by id (each id fetched once)."""
    wanted = sorted(set(ids))
    found = await asyncio.gather(*(_get(client, user_id) for user_id in wanted))
    return {user_id: _user(user_id, body) for user_id, body in zip(wanted, found, strict=True) if body is not None}


async def _get(client: ApiClient, user_id: str) -> dict[str, object] | None:
    try:
        return await client.get(USER_ENTITY, user_id)
    except Forbidden:
        return None


def _user(user_id: str, body: dict[str, object]) -> User:
    def text(name: str) -> str:
        value = body.get(name)
        return value.strip() if isinstance(value, str) else ""

    return User(user_id, text("first_name"), text("last_name"), text("email_address"))
