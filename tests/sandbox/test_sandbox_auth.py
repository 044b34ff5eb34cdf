"""The identity provider's token endpoint and the bearer checks of every /institution route."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable

import httpx
import pytest
from helpers.sandbox import TOKEN_PATH, Caller, fetch_token

from loader.sandbox.server import RunningSandbox, SandboxOptions, serve_in_thread

API_ROUTES = [
    "/institution/catalogue/schools",
    "/institution/catalogue/courses",
    "/institution/catalogue/programs",
    "/institution/catalogue/subjects",
    "/institution/applicants",
    "/institution/applicants/credentials",
    "/institution/articulation-arrangements",
    "/institution/applications",
    "/institution/suggestions",
    "/institution/tags",
    "/institution/users",
    "/institution/roles",
]


def _form(client_id: str, secret: str, grant: str = "client_credentials") -> dict[str, str]:
    return {"grant_type": grant, "client_id": client_id, "client_secret": secret}


def test_client_credentials_grant_returns_a_bearer_token_with_its_lifetime(
    sandbox: RunningSandbox, http: httpx.Client
) -> None:
    answer = http.post(TOKEN_PATH, data=_form(sandbox.client_id, sandbox.client_secret))
    assert answer.status_code == 200
    body = answer.json()
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 1800
    assert isinstance(body["access_token"], str) and len(body["access_token"]) >= 32


def test_each_token_request_mints_a_new_token(sandbox: RunningSandbox) -> None:
    first = fetch_token(sandbox.base_url, sandbox.client_id, sandbox.client_secret)
    second = fetch_token(sandbox.base_url, sandbox.client_id, sandbox.client_secret)
    assert first != second


def test_client_may_authenticate_with_http_basic(sandbox: RunningSandbox, http: httpx.Client) -> None:
    basic = base64.b64encode(f"{sandbox.client_id}:{sandbox.client_secret}".encode()).decode()
    answer = http.post(
        TOKEN_PATH, data={"grant_type": "client_credentials"}, headers={"Authorization": f"Basic {basic}"}
    )
    assert answer.status_code == 200


@pytest.mark.parametrize(("client_id", "secret"), [("sandbox-client", "wrong"), ("nobody", "sandbox-secret"), ("", "")])
def test_wrong_client_or_secret_is_invalid_client(http: httpx.Client, client_id: str, secret: str) -> None:
    answer = http.post(TOKEN_PATH, data=_form(client_id, secret))
    assert answer.status_code == 401
    assert answer.json()["error"] == "invalid_client"
    assert answer.json()["error_description"]


def test_another_grant_type_is_unsupported_grant_type(sandbox: RunningSandbox, http: httpx.Client) -> None:
    answer = http.post(TOKEN_PATH, data=_form(sandbox.client_id, sandbox.client_secret, grant="password"))
    assert answer.status_code == 400
    assert answer.json()["error"] == "unsupported_grant_type"


def test_token_request_without_a_form_is_invalid_request(http: httpx.Client) -> None:
    answer = http.post(TOKEN_PATH, content=b'{"grant_type": "client_credentials"}')
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_request"


def test_another_realm_is_not_found(sandbox: RunningSandbox, http: httpx.Client) -> None:
    answer = http.post("/realms/elsewhere/protocol/openid-connect/token", data=_form(sandbox.client_id, "x"))
    assert answer.status_code == 404


def _expect_401(answer: httpx.Response, fragment: str) -> None:
    assert answer.status_code == 401, answer.text
    body = answer.json()
    assert set(body) == {"environment", "timestamp", "message"}
    assert fragment in body["message"]
    assert answer.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("path", API_ROUTES)
def test_every_route_refuses_a_request_without_a_token(http: httpx.Client, path: str) -> None:
    _expect_401(http.get(path), "missing access token")


def test_a_token_without_the_bearer_prefix_is_refused(api: Caller, http: httpx.Client) -> None:
    _expect_401(http.get(API_ROUTES[0], headers={"Authorization": api.token}), "malformed Authorization header")


def test_the_whole_token_json_sent_as_the_token_is_refused(sandbox: RunningSandbox, http: httpx.Client) -> None:
    body = http.post(TOKEN_PATH, data=_form(sandbox.client_id, sandbox.client_secret)).json()
    answer = http.get(API_ROUTES[0], headers={"Authorization": f"Bearer {json.dumps(body)}"})
    _expect_401(answer, "not the whole JSON body")


def test_an_unknown_token_is_refused(http: httpx.Client) -> None:
    _expect_401(http.get(API_ROUTES[0], headers={"Authorization": "Bearer not-a-token"}), "unknown access token")


def test_a_token_used_past_expires_in_is_refused() -> None:
    with serve_in_thread(SandboxOptions(token_ttl=0.3)) as sb, httpx.Client(base_url=sb.base_url) as http:
        answer = http.post(TOKEN_PATH, data=_form(sb.client_id, sb.client_secret))
        assert answer.json()["expires_in"] == 0.3
        headers = {"Authorization": f"Bearer {answer.json()['access_token']}"}
        assert http.get(API_ROUTES[0], headers=headers).status_code == 200
        time.sleep(0.4)
        _expect_401(http.get(API_ROUTES[0], headers=headers), "access token expired")


def test_writes_are_attributed_to_the_clients_service_user(api: Caller, other_api: Caller) -> None:
    created = api.create("/institution/tags", {"name": "attributed-a"})
    other = other_api.create("/institution/tags", {"name": "attributed-b"})
    user_a = created["metadata"]["created"]["user"]
    user_b = other["metadata"]["created"]["user"]
    assert user_a["email_address"].startswith("sandbox-client@")
    assert user_b["email_address"].startswith("other-client@")
    assert user_a["id"] != user_b["id"]
    assert set(user_a) == {"id", "email_address", "first_name", "last_name"}


def test_a_patch_through_staff_client_is_attributed_to_its_own_user(
    sandbox: RunningSandbox, http: httpx.Client, api: Caller, unique: Callable[[str], str]
) -> None:
    staff = Caller(http, fetch_token(sandbox.base_url, sandbox.staff_client_id, sandbox.staff_client_secret))
    school = api.create("/institution/catalogue/schools", {"code": unique("STAFF"), "name": "Before"})
    loader_user = school["metadata"]["updated"]["user"]
    answer = staff.patch(f"/institution/catalogue/schools/{school['id']}", {"name": "Edited by staff"})
    assert answer.status_code == 200, answer.text
    staff_user = answer.json()["data"]["metadata"]["updated"]["user"]
    assert staff_user == {
        "id": staff_user["id"],
        "email_address": "robin.staff@institution-a.sandbox.invalid",
        "first_name": "Robin",
        "last_name": "Staff",
    }
    assert staff_user["id"] != loader_user["id"]
    assert staff_user["email_address"] != loader_user["email_address"]
    assert (staff_user["first_name"], staff_user["last_name"]) != (loader_user["first_name"], loader_user["last_name"])
    seen_by_loader = api.get(f"/institution/catalogue/schools/{school['id']}").json()["data"]
    assert seen_by_loader["name"] == "Edited by staff"  # the same institution's record
    assert seen_by_loader["metadata"]["updated"]["user"] == staff_user
    assert seen_by_loader["metadata"]["created"]["user"] == loader_user


def test_an_extra_client_shares_its_institutions_records() -> None:
    options = SandboxOptions(clients=(("third-client", "third-secret", "institution-a"),))
    with serve_in_thread(options) as sb, httpx.Client(base_url=sb.base_url) as http:
        a = Caller(http, fetch_token(sb.base_url, sb.client_id, sb.client_secret))
        third = Caller(http, fetch_token(sb.base_url, "third-client", "third-secret"))
        tag = a.create("/institution/tags", {"name": "shared"})
        assert third.get(f"/institution/tags/{tag['id']}").status_code == 200
