"""`loader.api.users`: the users a plan names, read by id through the sandbox as a real server; an
id the service does not know is left out (reports show the id)."""

from __future__ import annotations

import asyncio

from helpers.apply import client_for

from loader.api.users import User, fetch_users
from loader.sandbox.server import SandboxOptions, serve_in_thread
from loader.sandbox.tokens import DEFAULT_CLIENTS

STAFF_ID = next(c.user["id"] for c in DEFAULT_CLIENTS if c.client_id == "staff-client")
UNKNOWN = "00000000-0000-4000-8000-00000000dead"


def test_users_are_read_by_id_each_once_and_unknown_ids_left_out() -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        async def go() -> tuple[dict[str, User], dict[str, int]]:
            async with client_for(sandbox) as client:
                found = await fetch_users(client, [STAFF_ID, UNKNOWN, STAFF_ID])
                return found, dict(client.request_counts)

        found, counts = asyncio.run(go())
    assert list(found) == [STAFF_ID] and found[STAFF_ID].name == "Robin Staff"
    assert found[STAFF_ID].email_address == "robin.staff@institution-a.sandbox.invalid"
    assert counts.get("GET") == 2  # one request per id, the repeated one not again


def test_a_user_without_names_is_named_by_id_never_by_e_mail() -> None:
    assert User("u1", "", "", "a@x.invalid").name == "u1"  # names are printed: an address never is
    assert User("u1", "", "", "").name == "u1"
    assert User("u1", "Ana", "", "a@x.invalid").name == "Ana"
