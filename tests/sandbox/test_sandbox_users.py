"""The clients' own users read by id, as reports read who changed a record: staff-client's is Robin
Staff; a client of another institution cannot read them."""

from __future__ import annotations

from helpers.sandbox import Caller

from loader.sandbox.tokens import DEFAULT_CLIENTS

STAFF = next(c.user for c in DEFAULT_CLIENTS if c.client_id == "staff-client")


def test_the_staff_clients_user_is_read_by_its_id(api: Caller) -> None:
    answer = api.get(f"/institution/users/{STAFF['id']}")
    assert answer.status_code == 200, answer.text
    user = answer.json()["data"]
    assert (user["first_name"], user["last_name"], user["email_address"]) == (
        "Robin", "Staff", "robin.staff@institution-a.sandbox.invalid")


def test_another_institutions_client_cannot_read_them(other_api: Caller) -> None:
    assert other_api.get(f"/institution/users/{STAFF['id']}").status_code == 404
