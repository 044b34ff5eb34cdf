"""Faults the probe campaign found in the sandbox: a 500 on a null status, an open outbox, immortal tokens."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from helpers.sandbox import Caller

from loader.commands import sandbox as sandbox_command
from loader.sandbox.server import RunningSandbox, SandboxOptions

ARRANGEMENTS = "/institution/articulation-arrangements"
APPLICATIONS = "/institution/applications"


@pytest.fixture
def applicant(api: Caller, unique: Callable[[str], str]) -> dict[str, Any]:
    return api.create("/institution/applicants", {"external_id": unique("A"), "email_address": "a@example.com"})


def test_clearing_an_arrangement_status_is_a_validation_error_not_a_server_error(
    api: Caller, unique: Callable[[str], str]
) -> None:
    record = api.create(ARRANGEMENTS, {"code": unique("ART"), "name": "Arrangement"})
    answer = api.patch(f"{ARRANGEMENTS}/{record['id']}", {"status": None})
    assert answer.status_code == 400, answer.text
    assert answer.json()["message"] == "ValidationError: field 'status' cannot be null (every arrangement has one)"
    assert api.get(f"{ARRANGEMENTS}/{record['id']}").json()["data"]["status"] == "DRAFT"


def test_no_status_the_service_sets_can_be_cleared(api: Caller, applicant: dict[str, Any]) -> None:
    record = api.create(APPLICATIONS, {"applicant_id": applicant["id"]})
    answer = api.patch(f"{APPLICATIONS}/{record['id']}", {"status": None})
    assert answer.status_code == 400, answer.text
    assert api.get(f"{APPLICATIONS}/{record['id']}/outcome").status_code == 200


def test_the_outbox_needs_a_token(http: httpx.Client) -> None:
    answer = http.get("/q/sandbox/outbox")
    assert answer.status_code == 401
    assert "messages" not in answer.json()
    assert http.get("/q/sandbox/outbox", headers={"Authorization": "Bearer forged"}).status_code == 401


def test_the_outbox_shows_only_the_callers_institution(
    sandbox: RunningSandbox, api: Caller, other_api: Caller, applicant: dict[str, Any], unique: Callable[[str], str]
) -> None:
    other_applicant = other_api.create(
        "/institution/applicants", {"external_id": unique("B"), "email_address": "b@example.org"}
    )
    api.create(APPLICATIONS, {"applicant_id": applicant["id"], "send_email": True})
    other_api.create(APPLICATIONS, {"applicant_id": other_applicant["id"], "send_email": True})
    ours, theirs = sandbox.outbox(), sandbox.outbox(other=True)
    assert ours and {m["institution"] for m in ours} == {"institution-a"}
    assert theirs and {m["institution"] for m in theirs} == {"institution-b"}
    assert "b@example.org" not in str(ours) and "a@example.com" not in str(theirs)


@pytest.mark.parametrize("ttl", ["nan", "inf", "-inf", "-5", "0"])
@pytest.mark.parametrize("flag", ["--token-ttl", "--page-token-ttl"])
def test_a_token_lifetime_that_never_ends_is_refused(
    flag: str, ttl: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert sandbox_command.main(["serve", "--port", "0", f"{flag}={ttl}"]) == 64
    assert "must be a finite number of seconds > 0" in capsys.readouterr().err


@pytest.mark.parametrize("ttl", [math.nan, math.inf, -1.0])
def test_sandbox_options_refuse_an_endless_token_lifetime(ttl: float) -> None:
    with pytest.raises(ValueError, match="token_ttl"):
        SandboxOptions(token_ttl=ttl)
    with pytest.raises(ValueError, match="page_token_ttl"):
        SandboxOptions(page_token_ttl=ttl)
