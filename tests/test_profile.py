"""The entity profile: packaged data, validated, overridable from loader.yaml."""

from __future__ import annotations

import pytest

from loader.api.paging import page_from_envelope
from loader.errors import ProfileError
from loader.profile import load_profile


def test_the_packaged_profile_describes_every_entity_the_mappings_name():
    profile = load_profile()
    for name in ("school", "course", "program", "subject", "applicant", "credential", "arrangement"):
        entity = profile.entity(name)
        assert entity.path.startswith("/institution/")
        assert entity.create is not None and entity.update is not None
    assert profile.entity("subject").create_only == {"access"}
    assert profile.entity("credential").immutable == {"type"}
    assert profile.entity("tag").writable is False


def test_status_paths_are_the_shortest_legal_ones_and_inactive_never_returns():
    status = load_profile().entity("arrangement").status
    assert status is not None and status.initial == "DRAFT" and status.on_create is False
    assert status.path("DRAFT", "ACTIVE") == ("READY", "ACTIVE")
    assert status.path("ACTIVE", "DRAFT") is None
    assert status.path("INACTIVE", "ACTIVE") is None
    assert status.path("READY", "READY") == ()


def test_curriculum_codes_form_one_uniqueness_group():
    profile = load_profile()
    assert profile.unique_group_of("program") == ("code", ("school", "course", "program", "subject"))
    assert profile.unique_group_of("applicant") is None


def test_an_override_changes_only_what_it_names():
    profile = load_profile(
        {
            "entities": {"course": {"update": {"method": "PUT", "path": "/v2/courses/{id}"}}},
            "service": {"envelope": {"version": "apiVersion"}},
        }
    )
    course = profile.entity("course")
    assert course.update is not None
    assert (course.update.method, course.update.path) == ("PUT", "/v2/courses/{id}")
    assert course.create is not None and course.create.path == "/institution/catalogue/courses"
    assert profile.service.envelope.version == "apiVersion"
    assert profile.service.envelope.data == "data"


def test_envelope_field_names_come_from_the_profile():
    names = load_profile({"service": {"envelope": {"data": "items", "page_token": "next"}}}).service.envelope
    page = page_from_envelope({"items": [{"id": "1"}], "next": "t2", "total": 3, "page_total": 1}, names)
    assert (page.records, page.page_token, page.total) == (({"id": "1"},), "t2", 3)


def test_an_invalid_override_lists_every_problem_with_a_hint():
    with pytest.raises(ProfileError) as raised:
        load_profile({"entities": {"course": {"key": "code", "update": {"method": "DELETE", "path": "x"}}}})
    text = str(raised.value)
    assert "profile.entities.course.key" in text
    assert "profile.entities.course.update.method" in text
    assert "loader.yaml" in text and "hint" in text


def test_a_reference_to_an_unknown_entity_is_refused():
    with pytest.raises(ProfileError, match="unknown entity 'faculty'"):
        load_profile({"entities": {"course": {"references": {"parent": {"entity": ["faculty"], "shape": "id"}}}}})


def test_asking_for_an_unknown_entity_names_the_known_ones():
    with pytest.raises(ProfileError) as raised:
        load_profile().entity("courses")
    assert "course" in (raised.value.hint or "")
