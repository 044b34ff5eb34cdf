"""Institutions are isolated: B never sees, changes or references A's records."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.sandbox import Caller

COURSES = "/institution/catalogue/courses"


def test_institution_b_cannot_read_a_record_of_a_by_id_or_code(
    api: Caller, other_api: Caller, unique: Callable[[str], str]
) -> None:
    course = api.create(COURSES, {"code": unique("SECRET"), "name": "A's course"})
    for key in (course["id"], course["code"]):
        answer = other_api.get(f"{COURSES}/{key}")
        assert answer.status_code == 404
        assert "A's course" not in answer.text


def test_institution_b_cannot_change_a_record_of_a(
    api: Caller, other_api: Caller, unique: Callable[[str], str]
) -> None:
    course = api.create(COURSES, {"code": unique("KEEP"), "name": "Unchanged"})
    answer = other_api.patch(f"{COURSES}/{course['id']}", {"name": "Hijacked"})
    assert answer.status_code == 404
    assert api.get(f"{COURSES}/{course['id']}").json()["data"]["name"] == "Unchanged"


def test_lists_hold_only_the_callers_records(api: Caller, other_api: Caller, unique: Callable[[str], str]) -> None:
    code = unique("MINE")
    api.create(COURSES, {"code": code, "name": "A only"})
    assert code not in {r["code"] for r in other_api.all_pages(COURSES)}
    assert code in {r["code"] for r in api.all_pages(COURSES)}


def test_the_same_code_may_exist_in_both_institutions(
    api: Caller, other_api: Caller, unique: Callable[[str], str]
) -> None:
    code = unique("BOTH")
    a = api.create(COURSES, {"code": code, "name": "A"})
    b = other_api.create(COURSES, {"code": code, "name": "B"})
    assert a["id"] != b["id"]
    assert other_api.get(f"{COURSES}/{code}").json()["data"]["name"] == "B"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (COURSES, lambda ids: {"code": ids["code"], "name": "x", "parent": {"id": ids["school"]}}),
        ("/institution/applicants/credentials", lambda ids: {"applicant_id": ids["applicant"], "type": "TERTIARY"}),
        ("/institution/applications", lambda ids: {"applicant_id": ids["applicant"]}),
    ],
)
def test_a_reference_to_a_record_of_another_institution_is_refused(
    api: Caller, other_api: Caller, unique: Callable[[str], str], path: str, body: Callable[[dict[str, str]], dict]
) -> None:
    school = api.create("/institution/catalogue/schools", {"code": unique("S"), "name": "A's school"})
    applicant = api.create("/institution/applicants", {"external_id": unique("EXT")})
    ids = {"school": school["id"], "applicant": applicant["id"], "code": unique("REF")}
    answer = other_api.post(path, body(ids))
    assert answer.status_code == 400
    assert "ValidationError" in answer.json()["message"]
