"""Curriculum collections: create, get by id or code, update, codes unique across types, children."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.sandbox import Caller

SCHOOLS = "/institution/catalogue/schools"
COURSES = "/institution/catalogue/courses"
PROGRAMS = "/institution/catalogue/programs"
SUBJECTS = "/institution/catalogue/subjects"
TYPES = {SCHOOLS: "SCHOOL", COURSES: "COURSE", PROGRAMS: "PROGRAM", SUBJECTS: "SUBJECT"}


@pytest.mark.parametrize("path", list(TYPES))
def test_create_sets_id_type_and_metadata_and_answers_201(api: Caller, unique: Callable[[str], str], path: str) -> None:
    answer = api.post(path, {"code": unique("C"), "name": "Thing", "custom_attributes": {"Faculty": "Arts"}})
    assert answer.status_code == 201
    body = answer.json()
    assert set(body) == {"environment", "timestamp", "version", "data"}
    assert body["environment"] == "sandbox" and body["version"] == "5.1.0"
    assert body["timestamp"] > 1_600_000_000_000  # milliseconds
    record = body["data"]
    assert record["type"] == TYPES[path]
    assert len(record["id"]) == 36
    assert record["metadata"]["created"] == record["metadata"]["updated"]
    assert record["custom_attributes"] == {"Faculty": "Arts"}


def test_a_record_is_found_by_id_and_by_code(api: Caller, unique: Callable[[str], str]) -> None:
    code = unique("BSC")
    created = api.create(COURSES, {"code": code, "name": "Bachelor"})
    by_id = api.get(f"{COURSES}/{created['id']}").json()["data"]
    by_code = api.get(f"{COURSES}/{code}").json()["data"]
    assert by_id == by_code
    assert by_id["code"] == code


def test_get_by_code_only_looks_in_its_own_collection(api: Caller, unique: Callable[[str], str]) -> None:
    code = unique("ONLY-SCHOOL")
    api.create(SCHOOLS, {"code": code, "name": "School"})
    assert api.get(f"{COURSES}/{code}").status_code == 404


def test_an_unknown_id_or_code_is_404_with_an_error_body(api: Caller) -> None:
    answer = api.get(f"{COURSES}/no-such-course")
    assert answer.status_code == 404
    assert set(answer.json()) == {"environment", "timestamp", "message"}


def test_a_code_used_by_another_curriculum_type_is_a_409_naming_it(api: Caller, unique: Callable[[str], str]) -> None:
    code = unique("ENG101")
    course = api.create(COURSES, {"code": code, "name": "Engineering Foundations"})
    answer = api.post(SUBJECTS, {"code": code, "name": "Other"})
    assert answer.status_code == 409
    assert answer.json()["message"] == (
        f"Conflict: code '{code}' is already used by COURSE {course['id']} 'Engineering Foundations'"
    )


def test_a_code_used_in_the_same_collection_is_a_409(api: Caller, unique: Callable[[str], str]) -> None:
    code = unique("DUP")
    api.create(SCHOOLS, {"code": code, "name": "First"})
    assert api.post(SCHOOLS, {"code": code, "name": "Second"}).status_code == 409


def test_an_update_to_a_code_in_use_is_a_409(api: Caller, unique: Callable[[str], str]) -> None:
    taken = api.create(PROGRAMS, {"code": unique("TAKEN"), "name": "Taken"})
    mover = api.create(SUBJECTS, {"code": unique("MOVER"), "name": "Mover"})
    answer = api.patch(f"{SUBJECTS}/{mover['id']}", {"code": taken["code"]})
    assert answer.status_code == 409
    assert "PROGRAM" in answer.json()["message"]


def test_codes_differing_only_in_case_are_two_records(api: Caller, unique: Callable[[str], str]) -> None:
    code = unique("math")
    lower = api.create(SUBJECTS, {"code": code, "name": "lower"})
    upper = api.create(SUBJECTS, {"code": code.upper(), "name": "upper"})
    assert lower["id"] != upper["id"]
    assert api.get(f"{SUBJECTS}/{code.upper()}").json()["data"]["name"] == "upper"
    assert api.get(f"{SUBJECTS}/{code}").json()["data"]["name"] == "lower"


def test_children_appear_on_get_one_but_not_on_lists(api: Caller, unique: Callable[[str], str]) -> None:
    school = api.create(SCHOOLS, {"code": unique("SCI"), "name": "Science"})
    course = api.create(COURSES, {"code": unique("BSC"), "name": "BSc", "parent": {"id": school["id"]}})
    program = api.create(PROGRAMS, {"code": unique("MAJ"), "name": "Major", "parent": {"id": school["id"]}})
    children = api.get(f"{SCHOOLS}/{school['id']}").json()["data"]["children"]
    assert children == [
        {"id": course["id"], "code": course["code"], "name": "BSc", "type": "COURSE"},
        {"id": program["id"], "code": program["code"], "name": "Major", "type": "PROGRAM"},
    ]
    listed = api.all_pages(SCHOOLS, code=school["code"])
    assert listed and all("children" not in r for r in listed)
    assert school["children"] == []  # a create answers like get-one


def test_a_parent_must_exist(api: Caller, unique: Callable[[str], str]) -> None:
    answer = api.post(COURSES, {"code": unique("ORPHAN"), "name": "x", "parent": {"id": "no-such-id"}})
    assert answer.status_code == 400
    assert answer.json()["message"].startswith("ValidationError: field 'parent'")


@pytest.mark.parametrize("parent", ["a-string", {"code": "SCI"}, {"id": 5}, {"id": "x", "extra": 1}, []])
def test_a_parent_must_be_an_object_with_an_id(api: Caller, unique: Callable[[str], str], parent: object) -> None:
    answer = api.post(COURSES, {"code": unique("BADPARENT"), "name": "x", "parent": parent})
    assert answer.status_code == 400
    assert answer.json()["message"].startswith("ValidationError: field 'parent' must be")


def test_a_record_cannot_become_its_own_ancestor(api: Caller, unique: Callable[[str], str]) -> None:
    top = api.create(SCHOOLS, {"code": unique("TOP"), "name": "Top"})
    below = api.create(COURSES, {"code": unique("BELOW"), "name": "Below", "parent": {"id": top["id"]}})
    answer = api.patch(f"{SCHOOLS}/{top['id']}", {"parent": {"id": below["id"]}})
    assert answer.status_code == 400
    assert "ancestor" in answer.json()["message"]


def test_patch_replaces_each_field_sent_and_leaves_the_rest(api: Caller, unique: Callable[[str], str]) -> None:
    created = api.create(
        COURSES, {"code": unique("P"), "name": "Old", "custom_attributes": {"A": "1", "B": "2"}, "description": "d"}
    )
    answer = api.patch(f"{COURSES}/{created['id']}", {"name": "New", "custom_attributes": {"A": "9"}})
    assert answer.status_code == 200
    updated = answer.json()["data"]
    assert updated["name"] == "New"
    assert updated["custom_attributes"] == {"A": "9"}  # the whole map is replaced
    assert updated["description"] == "d"
    assert updated["metadata"]["created"] == created["metadata"]["created"]
    assert updated["metadata"]["updated"]["time"] >= created["metadata"]["updated"]["time"]
    assert api.get(f"{COURSES}/{created['id']}").json()["data"] == updated


def test_null_in_a_patch_clears_an_optional_field(api: Caller, unique: Callable[[str], str]) -> None:
    school = api.create(SCHOOLS, {"code": unique("S"), "name": "S"})
    course = api.create(COURSES, {"code": unique("C"), "name": "C", "parent": {"id": school["id"]}})
    cleared = api.patch(f"{COURSES}/{course['id']}", {"parent": None}).json()["data"]
    assert "parent" not in cleared
    assert api.get(f"{SCHOOLS}/{school['id']}").json()["data"]["children"] == []


def test_null_for_a_required_field_is_refused(api: Caller, unique: Callable[[str], str]) -> None:
    course = api.create(COURSES, {"code": unique("C"), "name": "C"})
    answer = api.patch(f"{COURSES}/{course['id']}", {"name": None})
    assert answer.status_code == 400


def test_subject_access_is_kept_on_create_and_ignored_by_updates(api: Caller, unique: Callable[[str], str]) -> None:
    subject = api.create(SUBJECTS, {"code": unique("ACC"), "name": "A", "access": "Open"})
    assert subject["access"] == "Open"
    answer = api.patch(f"{SUBJECTS}/{subject['id']}", {"access": "Restricted", "name": "B"})
    assert answer.status_code == 200
    assert answer.json()["data"]["access"] == "Open"
    assert answer.json()["data"]["name"] == "B"


@pytest.mark.parametrize("field", ["type", "id", "metadata", "children"])
def test_server_set_fields_are_refused_in_a_body(api: Caller, unique: Callable[[str], str], field: str) -> None:
    answer = api.post(SCHOOLS, {"code": unique("RO"), "name": "x", field: "SCHOOL"})
    assert answer.status_code == 400
    assert answer.json()["message"] == f"ValidationError: field '{field}' is read-only"


def test_patch_of_an_unknown_id_is_404(api: Caller) -> None:
    assert api.patch(f"{COURSES}/nope", {"name": "x"}).status_code == 404


def test_patch_by_code_is_not_accepted(api: Caller, unique: Callable[[str], str]) -> None:
    course = api.create(COURSES, {"code": unique("BYCODE"), "name": "x"})
    assert api.patch(f"{COURSES}/{course['code']}", {"name": "y"}).status_code == 404


def test_records_list_in_creation_order(api: Caller, unique: Callable[[str], str]) -> None:
    codes = [unique("ORD") for _ in range(5)]
    for code in codes:
        api.create(PROGRAMS, {"code": code, "name": "n"})
    listed = [r["code"] for r in api.all_pages(PROGRAMS)]
    assert [c for c in listed if c in codes] == codes


def test_a_list_filters_by_parent_id(api: Caller, unique: Callable[[str], str]) -> None:
    school = api.create(SCHOOLS, {"code": unique("PARENT"), "name": "Parent"})
    child = api.create(COURSES, {"code": unique("CHILD"), "name": "Child", "parent": {"id": school["id"]}})
    api.create(COURSES, {"code": unique("LONER"), "name": "Loner"})
    assert [c["id"] for c in api.all_pages(COURSES, parent=school["id"])] == [child["id"]]
