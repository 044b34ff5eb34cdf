"""Entity payload schemas: one per writable entity, refs checked by shape, errors per field."""

from __future__ import annotations

import datetime

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.profile import load_profile
from loader.source.entity_schemas import (
    check_fields,
    default_type,
    field_names,
    fields_checker,
    payload_schema,
    value_checks,
)
from loader.source.records import Ref

PROFILE = load_profile()
WITH_SCHEMA = sorted(name for name, e in PROFILE.entities.items() if e.schema)


def test_every_writable_entity_with_a_schema_name_has_a_valid_schema_file() -> None:
    assert WITH_SCHEMA == ["applicant", "arrangement", "course", "credential", "program", "school", "subject"]
    for name in WITH_SCHEMA:
        schema = payload_schema(PROFILE.entity(name).schema or "")
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False


@pytest.mark.parametrize("name", WITH_SCHEMA)
def test_payload_schemas_leave_out_read_only_and_forbidden_fields(name: str) -> None:
    entity = PROFILE.entity(name)
    assert not (set(field_names(entity)) & (entity.read_only | entity.forbidden))


def test_references_are_checked_by_their_shape_with_a_placeholder() -> None:
    course = PROFILE.entity("course")
    assert check_fields(course, {"code": "BSC", "parent": Ref("school", ("SCI",))}) == []
    arrangement = PROFILE.entity("arrangement")
    assert check_fields(arrangement, {"subjects_awarded": (Ref("subject", ("M1",)), Ref("subject", ("M2",)))}) == []


def test_violations_name_their_field_and_custom_attribute_label() -> None:
    credential = PROFILE.entity("credential")
    problems = check_fields(credential, {"type": "DEGREE", "tags": "x"})
    assert sorted((p.field, p.message) for p in problems) == [
        ("tags", "expected array, got 'x'"),
        ("type", "expected one of TERTIARY, SUBJECT, PROFESSIONAL, EMPLOYMENT, got 'DEGREE'"),
    ]
    school = PROFILE.entity("school")
    problems = check_fields(school, {"custom_attributes": {"Points": 240}})
    assert [(p.field, p.message) for p in problems] == [("custom_attributes.Points", "expected string, got 240")]


def test_cleared_fields_are_valid() -> None:
    assert check_fields(PROFILE.entity("applicant"), {"date_of_birth": None, "eligible_deliveries": []}) == []


def test_default_types_follow_the_schema() -> None:
    applicant = PROFILE.entity("applicant")
    assert [default_type(applicant, f) for f in ("first_name", "date_of_birth", "eligible_deliveries")] == [
        "string", "date", "list",
    ]


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
    | st.sampled_from(["2027-02-28", "a@b.cd", "TERTIARY", "ACTIVE", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    | st.dictionaries(st.sampled_from(["id", "x"]), inner, max_size=2),  # a reference's {"id": ...} shape
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(WITH_SCHEMA), data=st.data())
def test_the_record_and_field_checks_agree_with_the_reference_validator(name: str, data: st.DataObject) -> None:
    """jsonschema_rs (the loader's validator) judges as the Python reference implementation does,
    and the per-field checks of the column path pass only what check_fields passes."""
    entity = PROFILE.entity(name)
    fields = data.draw(st.dictionaries(st.sampled_from([*field_names(entity), "other"]), _json_values, max_size=4))
    fields = {k: v for k, v in fields.items() if v is not None}
    valid = jsonschema.Draft202012Validator(payload_schema(entity.schema or "")).is_valid(fields)
    assert (check_fields(entity, fields) == []) == valid
    assert fields_checker(entity, value_checks(entity))(fields) == valid


def test_a_pii_field_s_violation_says_what_was_expected_without_the_value() -> None:
    applicant = PROFILE.entity("applicant")
    problems = check_fields(applicant, {"email_address": "not-an-email", "first_name": 7}, {"email_address"})
    assert sorted((p.field, p.message) for p in problems) == [
        ("email_address", "expected text matching '^[^@\\\\s]+@[^@\\\\s]+\\\\.[^@\\\\s]+$', got (hidden)"),
        ("first_name", "expected string, got 7"),
    ]
    labels = check_fields(applicant, {"custom_attributes": {"Phone": 61399990000}}, {"custom_attributes.Phone"})
    assert [(p.field, p.message) for p in labels] == [("custom_attributes.Phone", "expected string, got (hidden)")]
    # The map of labels holds the PII label's value, so a problem of the whole map hides it too.
    whole = check_fields(applicant, {"custom_attributes": ["0400 000 000"]}, {"custom_attributes.Phone"})
    assert [(p.field, p.message) for p in whole] == [("custom_attributes", "expected object, got (hidden)")]


def test_a_value_json_has_no_type_for_is_a_finding_of_its_field_not_a_crash() -> None:
    applicant = PROFILE.entity("applicant")
    born = datetime.date(2001, 2, 3)
    problems = check_fields(applicant, {"first_name": "Jo", "date_of_birth": born})
    assert [(p.field, p.message) for p in problems] == [
        ("date_of_birth", "expected text, a number, true/false or a list, got datetime.date(2001, 2, 3)")
    ]
    assert not fields_checker(applicant, value_checks(applicant))({"date_of_birth": born})
