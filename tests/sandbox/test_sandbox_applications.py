"""Applications, suggestions and their comments, tags, users (create-SSO) and roles."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from helpers.sandbox import Caller

from loader.sandbox.server import RunningSandbox

APPLICATIONS = "/institution/applications"
SUGGESTIONS = "/institution/suggestions"


@pytest.fixture
def applicant(api: Caller, unique: Callable[[str], str]) -> dict[str, Any]:
    return api.create("/institution/applicants", {"external_id": unique("A"), "email_address": "a@example.com"})


def test_send_email_records_one_message_in_the_outbox(
    api: Caller, sandbox: RunningSandbox, applicant: dict[str, Any]
) -> None:
    before = len(sandbox.outbox())
    mailed = api.create(APPLICATIONS, {"applicant_id": applicant["id"], "send_email": True})
    api.create(APPLICATIONS, {"applicant_id": applicant["id"], "send_email": False})
    api.create(APPLICATIONS, {"applicant_id": applicant["id"]})
    messages = sandbox.outbox()[before:]
    assert len(messages) == 1
    assert messages[0]["application_id"] == mailed["id"]
    assert messages[0]["to"] == "a@example.com"
    assert messages[0]["institution"] == "institution-a"
    assert "send_email" not in mailed


def test_suggestions_are_refused_on_an_application(api: Caller, applicant: dict[str, Any]) -> None:
    answer = api.post(APPLICATIONS, {"applicant_id": applicant["id"], "suggestions": []})
    assert answer.status_code == 400
    assert "suggestions" in answer.json()["message"]


def test_send_email_is_only_accepted_on_create(api: Caller, applicant: dict[str, Any]) -> None:
    application = api.create(APPLICATIONS, {"applicant_id": applicant["id"]})
    assert api.patch(f"{APPLICATIONS}/{application['id']}", {"send_email": True}).status_code == 400


def test_application_tags_must_exist_and_can_be_replaced(
    api: Caller, applicant: dict[str, Any], unique: Callable[[str], str]
) -> None:
    tag = api.create("/institution/tags", {"name": unique("Intl")})
    assert api.post(APPLICATIONS, {"applicant_id": applicant["id"], "tags": ["nope"]}).status_code == 400
    application = api.create(APPLICATIONS, {"applicant_id": applicant["id"], "tags": [tag["id"]]})
    cleared = api.patch(f"{APPLICATIONS}/{application['id']}", {"tags": []})
    assert cleared.json()["data"]["tags"] == []


def test_get_application_includes_comments_and_credit_matches(
    api: Caller, applicant: dict[str, Any], unique: Callable[[str], str]
) -> None:
    application = api.create(APPLICATIONS, {"applicant_id": applicant["id"]})
    assert application["comments"] == [] and application["credit_matches"] == []
    subject = api.create("/institution/catalogue/subjects", {"code": unique("SUB"), "name": "Subject"})
    suggestion = api.create(SUGGESTIONS, {"application_id": application["id"], "subject_id": subject["id"]})
    assert suggestion["status"] == "PENDING"
    comment = api.create(f"{SUGGESTIONS}/{suggestion['id']}/comments", {"text": "Looks equivalent"})
    api.patch(f"{SUGGESTIONS}/{suggestion['id']}", {"status": "ACCEPTED"})
    fetched = api.get(f"{APPLICATIONS}/{application['id']}").json()["data"]
    assert [c["id"] for c in fetched["comments"]] == [comment["id"]]
    assert fetched["credit_matches"] == [
        {"suggestion_id": suggestion["id"], "subject_id": subject["id"], "credential_id": None}
    ]
    listed = api.all_pages(APPLICATIONS, applicant_id=applicant["id"])
    assert all("comments" not in a for a in listed)


def test_application_outcome_reports_status_and_credit(api: Caller, applicant: dict[str, Any]) -> None:
    application = api.create(APPLICATIONS, {"applicant_id": applicant["id"]})
    outcome = api.get(f"{APPLICATIONS}/{application['id']}/outcome").json()["data"]
    assert outcome == {
        "application_id": application["id"],
        "status": "SUBMITTED",
        "decided": False,
        "credit_matches": [],
    }
    api.patch(f"{APPLICATIONS}/{application['id']}", {"status": "OFFERED"})
    assert api.get(f"{APPLICATIONS}/{application['id']}/outcome").json()["data"]["decided"] is True
    assert api.get(f"{APPLICATIONS}/missing/outcome").status_code == 404


def test_suggestion_comments_list_per_suggestion(api: Caller, applicant: dict[str, Any]) -> None:
    application = api.create(APPLICATIONS, {"applicant_id": applicant["id"]})
    first = api.create(SUGGESTIONS, {"application_id": application["id"]})
    second = api.create(SUGGESTIONS, {"application_id": application["id"]})
    api.create(f"{SUGGESTIONS}/{first['id']}/comments", {"text": "one"})
    api.create(f"{SUGGESTIONS}/{second['id']}/comments", {"text": "two"})
    page = api.get(f"{SUGGESTIONS}/{first['id']}/comments").json()
    assert [c["text"] for c in page["data"]] == ["one"]
    assert page["data"][0]["suggestion_id"] == first["id"]
    assert api.get(f"{SUGGESTIONS}/{second['id']}/comments", page_token=page["page_token"]).status_code == 400
    assert api.post(f"{SUGGESTIONS}/missing/comments", {"text": "x"}).status_code == 404


def test_a_suggestion_needs_an_existing_application(api: Caller) -> None:
    assert api.post(SUGGESTIONS, {"application_id": "nope"}).status_code == 400


def test_tags_list_and_names_are_unique(api: Caller, unique: Callable[[str], str]) -> None:
    name = unique("Scholarship")
    tag = api.create("/institution/tags", {"name": name})
    assert api.post("/institution/tags", {"name": name}).status_code == 409
    assert tag["id"] in {t["id"] for t in api.all_pages("/institution/tags")}


def test_roles_exist_by_default_and_cannot_be_created(api: Caller) -> None:
    names = [r["name"] for r in api.all_pages("/institution/roles")]
    assert names == ["Administrator", "Assessor", "Viewer"]
    assert api.post("/institution/roles", {"name": "Root"}).status_code == 405


def test_a_user_is_created_for_single_sign_on_with_existing_roles(api: Caller, unique: Callable[[str], str]) -> None:
    role = api.all_pages("/institution/roles")[0]
    email = f"{unique('user')}@example.edu.au"
    user = api.create("/institution/users", {"email_address": email, "first_name": "Ada", "roles": [role["id"]]})
    assert user["identity_provider"] == "sso" and user["active"] is True
    assert api.get(f"/institution/users/{email}").json()["data"]["id"] == user["id"]
    assert api.post("/institution/users", {"email_address": email}).status_code == 409
    assert api.post("/institution/users", {"email_address": "x@y", "roles": ["nope"]}).status_code == 400


def test_a_local_account_with_a_password_is_refused(api: Caller) -> None:
    answer = api.post("/institution/users", {"email_address": "local@example.com", "password": "hunter2"})
    assert answer.status_code == 400
    assert answer.json()["message"] == "ValidationError: unknown field 'password'"
