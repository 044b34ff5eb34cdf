"""Articulation arrangements: created DRAFT, the status transition table, refused fields."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from helpers.sandbox import Caller

ARRANGEMENTS = "/institution/articulation-arrangements"
STATES = ("DRAFT", "READY", "ACTIVE", "INACTIVE")
ALLOWED = {("DRAFT", "READY"), ("READY", "DRAFT"), ("READY", "ACTIVE"), ("ACTIVE", "INACTIVE")}
# the shortest legal path from DRAFT to each state
PATH_TO = {"DRAFT": [], "READY": ["READY"], "ACTIVE": ["READY", "ACTIVE"], "INACTIVE": ["READY", "ACTIVE", "INACTIVE"]}


def _arrangement_in(api: Caller, unique: Callable[[str], str], state: str) -> dict[str, Any]:
    record = api.create(ARRANGEMENTS, {"code": unique("ART"), "name": "Arrangement"})
    for step in PATH_TO[state]:
        answer = api.patch(f"{ARRANGEMENTS}/{record['id']}", {"status": step})
        assert answer.status_code == 200, answer.text
        record = answer.json()["data"]
    return record


def test_a_new_arrangement_starts_as_draft(api: Caller, unique: Callable[[str], str]) -> None:
    assert _arrangement_in(api, unique, "DRAFT")["status"] == "DRAFT"


@pytest.mark.parametrize("status", STATES)
def test_status_is_refused_on_create(api: Caller, unique: Callable[[str], str], status: str) -> None:
    answer = api.post(ARRANGEMENTS, {"code": unique("ART"), "name": "x", "status": status})
    assert answer.status_code == 400
    assert answer.json()["message"].startswith("ValidationError: field 'status' is not accepted")


def test_exemption_is_refused_on_create_and_update(api: Caller, unique: Callable[[str], str]) -> None:
    assert api.post(ARRANGEMENTS, {"code": unique("ART"), "name": "x", "exemption": True}).status_code == 400
    record = _arrangement_in(api, unique, "DRAFT")
    assert api.patch(f"{ARRANGEMENTS}/{record['id']}", {"exemption": {}}).status_code == 400


@pytest.mark.parametrize(("before", "after"), list(itertools.product(STATES, STATES)))
def test_status_moves_follow_the_transition_table(
    api: Caller, unique: Callable[[str], str], before: str, after: str
) -> None:
    record = _arrangement_in(api, unique, before)
    answer = api.patch(f"{ARRANGEMENTS}/{record['id']}", {"status": after})
    if before == after or (before, after) in ALLOWED:
        assert answer.status_code == 200, answer.text
        assert answer.json()["data"]["status"] == after
    else:
        assert answer.status_code == 400
        assert answer.json()["message"] == f"ValidationError: status cannot move from {before} to {after}"
        assert api.get(f"{ARRANGEMENTS}/{record['id']}").json()["data"]["status"] == before


def test_subjects_awarded_must_name_existing_subjects(api: Caller, unique: Callable[[str], str]) -> None:
    subject = api.create("/institution/catalogue/subjects", {"code": unique("SUBJ"), "name": "Subject"})
    ok = api.post(ARRANGEMENTS, {"code": unique("ART"), "name": "x", "subjects_awarded": [subject["id"]]})
    assert ok.status_code == 201
    assert ok.json()["data"]["subjects_awarded"] == [subject["id"]]
    bad = api.post(ARRANGEMENTS, {"code": unique("ART"), "name": "x", "subjects_awarded": [subject["code"]]})
    assert bad.status_code == 400


def test_mapping_is_optional_and_kept_as_sent(api: Caller, unique: Callable[[str], str]) -> None:
    mapping = [{"credential": "Diploma of IT", "subjects": ["a", "b"], "credit": 12.5}]
    record = api.create(ARRANGEMENTS, {"code": unique("ART"), "name": "x", "mapping": mapping})
    assert record["mapping"] == mapping


def test_an_arrangement_code_is_unique(api: Caller, unique: Callable[[str], str]) -> None:
    record = _arrangement_in(api, unique, "DRAFT")
    answer = api.post(ARRANGEMENTS, {"code": record["code"], "name": "Again"})
    assert answer.status_code == 409
    assert f"ARRANGEMENT {record['id']} 'Arrangement'" in answer.json()["message"]
