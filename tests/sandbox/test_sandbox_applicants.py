"""Applicants and their credentials."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from helpers.sandbox import Caller

APPLICANTS = "/institution/applicants"
CREDENTIALS = "/institution/applicants/credentials"


@pytest.fixture
def applicant(api: Caller, unique: Callable[[str], str]) -> dict[str, Any]:
    return api.create(APPLICANTS, {"external_id": unique("A"), "first_name": "Olivia", "last_name": "Nguyen"})


def test_an_applicant_keeps_every_documented_field(api: Caller, unique: Callable[[str], str]) -> None:
    body = {
        "external_id": unique("A"),
        "first_name": "Olivia",
        "last_name": "Nguyen",
        "email_address": "olivia@example.com",
        "date_of_birth": "2007-03-14",
        "eligible_deliveries": ["Online", "On campus"],
        "custom_attributes": {"Citizenship": "Australia"},
    }
    created = api.create(APPLICANTS, body)
    assert {k: created[k] for k in body} == body
    assert api.get(f"{APPLICANTS}/{body['external_id']}").json()["data"]["id"] == created["id"]


def test_an_applicant_needs_an_external_id(api: Caller) -> None:
    answer = api.post(APPLICANTS, {"first_name": "No id"})
    assert answer.status_code == 400
    assert answer.json()["message"] == "ValidationError: field 'external_id' is required"


def test_a_duplicate_external_id_is_a_409_naming_the_holder(api: Caller, applicant: dict[str, Any]) -> None:
    answer = api.post(APPLICANTS, {"external_id": applicant["external_id"]})
    assert answer.status_code == 409
    assert answer.json()["message"] == (
        f"Conflict: external_id '{applicant['external_id']}' is already used by APPLICANT {applicant['id']} "
        "'Olivia Nguyen'"
    )


@pytest.mark.parametrize("value", ["14/03/2007", "2007-02-30", 20070314, "2007-3-14"])
def test_date_of_birth_must_be_an_iso_date(api: Caller, unique: Callable[[str], str], value: object) -> None:
    answer = api.post(APPLICANTS, {"external_id": unique("A"), "date_of_birth": value})
    assert answer.status_code == 400


def test_eligible_deliveries_are_replaced_by_an_update(api: Caller, applicant: dict[str, Any]) -> None:
    path = f"{APPLICANTS}/{applicant['id']}"
    api.patch(path, {"eligible_deliveries": ["Online"]})
    assert api.get(path).json()["data"]["eligible_deliveries"] == ["Online"]


def test_credentials_filter_by_applicant(api: Caller, applicant: dict[str, Any], unique: Callable[[str], str]) -> None:
    other = api.create(APPLICANTS, {"external_id": unique("A")})
    mine = api.create(CREDENTIALS, {"applicant_id": applicant["id"], "type": "TERTIARY", "name": "BSc"})
    api.create(CREDENTIALS, {"applicant_id": other["id"], "type": "EMPLOYMENT"})
    assert [c["id"] for c in api.all_pages(CREDENTIALS, applicant_id=applicant["id"])] == [mine["id"]]


def test_a_credential_keeps_camel_case_fields_and_is_uploaded_by_the_client(
    api: Caller, applicant: dict[str, Any]
) -> None:
    body = {
        "applicant_id": applicant["id"],
        "type": "TERTIARY",
        "institutionCode": "UNSW",
        "institutionName": "University of New South Wales",
        "country": "AU",
        "completionDate": "2024-12-01",
        "resultType": "GPA",
        "result": "6.5",
        "name": "Bachelor of Arts",
    }
    created = api.create(CREDENTIALS, body)
    assert {k: created[k] for k in body} == body
    assert created["uploadedBy"]["email_address"].startswith("sandbox-client@")


def test_snake_case_credential_fields_are_unknown(api: Caller, applicant: dict[str, Any]) -> None:
    answer = api.post(CREDENTIALS, {"applicant_id": applicant["id"], "type": "TERTIARY", "institution_code": "X"})
    assert answer.status_code == 400
    assert answer.json()["message"] == "ValidationError: unknown field 'institution_code'"


def test_a_credential_type_outside_the_enum_is_refused(api: Caller, applicant: dict[str, Any]) -> None:
    answer = api.post(CREDENTIALS, {"applicant_id": applicant["id"], "type": "DIPLOMA"})
    assert answer.status_code == 400
    assert "TERTIARY, SUBJECT, PROFESSIONAL, EMPLOYMENT" in answer.json()["message"]


def test_a_credentials_applicant_must_exist(api: Caller) -> None:
    answer = api.post(CREDENTIALS, {"applicant_id": "nobody", "type": "TERTIARY"})
    assert answer.status_code == 400
    assert "applicant_id" in answer.json()["message"]


def test_a_credential_type_cannot_change_but_may_be_repeated(api: Caller, applicant: dict[str, Any]) -> None:
    credential = api.create(CREDENTIALS, {"applicant_id": applicant["id"], "type": "EMPLOYMENT", "duration": "2y"})
    path = f"{CREDENTIALS}/{credential['id']}"
    changed = api.patch(path, {"type": "TERTIARY"})
    assert changed.status_code == 400
    assert changed.json()["message"] == "ValidationError: field 'type' cannot be changed (EMPLOYMENT -> TERTIARY)"
    assert api.patch(path, {"type": "EMPLOYMENT", "duration": "3y"}).status_code == 200


@pytest.mark.parametrize("kind", ["TERTIARY", "PROFESSIONAL", "EMPLOYMENT"])
def test_parent_is_refused_on_a_create_of_a_non_subject_credential(
    api: Caller, applicant: dict[str, Any], kind: str
) -> None:
    degree = api.create(CREDENTIALS, {"applicant_id": applicant["id"], "type": "TERTIARY"})
    answer = api.post(CREDENTIALS, {"applicant_id": applicant["id"], "type": kind, "parent": {"id": degree["id"]}})
    assert answer.status_code == 400
    assert "only accepted for SUBJECT" in answer.json()["message"]


def test_parent_is_accepted_for_a_subject_credential_on_create_and_update(
    api: Caller, applicant: dict[str, Any]
) -> None:
    degree = api.create(CREDENTIALS, {"applicant_id": applicant["id"], "type": "TERTIARY"})
    other = api.create(CREDENTIALS, {"applicant_id": applicant["id"], "type": "TERTIARY"})
    unit = api.create(CREDENTIALS, {"applicant_id": applicant["id"], "type": "SUBJECT", "parent": {"id": degree["id"]}})
    assert unit["parent"] == {"id": degree["id"]}
    moved = api.patch(f"{CREDENTIALS}/{unit['id']}", {"parent": {"id": other["id"]}})
    assert moved.json()["data"]["parent"] == {"id": other["id"]}


def test_parent_is_refused_on_an_update_of_a_non_subject_credential(api: Caller, applicant: dict[str, Any]) -> None:
    degree = api.create(CREDENTIALS, {"applicant_id": applicant["id"], "type": "TERTIARY"})
    job = api.create(CREDENTIALS, {"applicant_id": applicant["id"], "type": "EMPLOYMENT"})
    answer = api.patch(f"{CREDENTIALS}/{job['id']}", {"parent": {"id": degree["id"]}})
    assert answer.status_code == 400


def test_credential_tags_must_exist_and_may_be_replaced(
    api: Caller, applicant: dict[str, Any], unique: Callable[[str], str]
) -> None:
    first = api.create("/institution/tags", {"name": unique("tag")})
    second = api.create("/institution/tags", {"name": unique("tag")})
    refused = api.post(CREDENTIALS, {"applicant_id": applicant["id"], "type": "SUBJECT", "tags": ["no-such-tag"]})
    assert refused.status_code == 400
    assert "tags" in refused.json()["message"]
    credential = api.create(CREDENTIALS, {"applicant_id": applicant["id"], "type": "SUBJECT", "tags": [first["id"]]})
    updated = api.patch(f"{CREDENTIALS}/{credential['id']}", {"tags": [second["id"], first["id"]]})
    assert updated.json()["data"]["tags"] == [second["id"], first["id"]]
    assert api.patch(f"{CREDENTIALS}/{credential['id']}", {"tags": ["gone"]}).status_code == 400


def test_uploaded_by_cannot_be_sent(api: Caller, applicant: dict[str, Any]) -> None:
    answer = api.post(CREDENTIALS, {"applicant_id": applicant["id"], "type": "SUBJECT", "uploadedBy": "me"})
    assert answer.status_code == 400
    assert answer.json()["message"] == "ValidationError: field 'uploadedBy' is read-only"
