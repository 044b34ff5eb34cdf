"""The pure planner: each rule of contract section 5, desired records x live dicts -> Plan."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from helpers.plan import Block

from loader.apply.graph import build_graph
from loader.findings import Finding
from loader.places import CellRef
from loader.plan.dependencies import block_dependents
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.model import Action, NotInSource, PendingId, Plan, RecordPlan
from loader.plan.plan_dict import plan_from_dict, plan_to_dict
from loader.plan.resolve import show_key
from loader.profile import load_profile
from loader.source.block_rows import LeftOut
from loader.source.records import DesiredRecord, Ref, display_value

PROFILE = load_profile()
COLUMNS = "ABCDEFGHIJ"


def record(block: str, entity: str, row: int, key_fields: Sequence[str] = ("code",), pii: Sequence[str] = (),
           **fields: Any) -> DesiredRecord:
    """A desired record whose fields sit in columns A, B, ... of `row` of the block's sheet."""
    names = list(fields)
    for name, value in list(fields.items()):
        if name == "custom_attributes":
            names += [f"custom_attributes.{label}" for label in value]
    cells = {n: CellRef("intake.xlsx", block, f"{COLUMNS[i]}{row}", row) for i, n in enumerate(names)}
    key = tuple(fields[k] for k in key_fields)
    return DesiredRecord(block, entity, key, fields, CellRef("intake.xlsx", block, None, row), cells, frozenset(pii))


def block(name: str, entity: str, *records: DesiredRecord, key_fields: tuple[str, ...] = ("code",)) -> Block:
    return Block(name, entity, key_fields, records, sheet=name)


def plan(blocks: Sequence[Block], live: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> Plan:
    return plan_changes(blocks, live or {}, PROFILE, header=PlanHeader("sandbox", "5.1.0", "http://127.0.0.1"))


def only(p: Plan) -> RecordPlan:
    (rec,) = p.records()
    return rec


def codes(rec: RecordPlan, severity: str) -> list[str]:
    return [f.code for f in rec.findings if f.severity == severity]


def live_record(rid: str, **fields: Any) -> dict[str, Any]:
    return {"id": rid, "metadata": {"updated": {"time": 1_700_000_000_000}}, **fields}


SCHOOL_SCI = live_record("s-1", code="SCI", name="School of Science", type="SCHOOL")


# ---- keys -----------------------------------------------------------------------------------


def test_a_record_equal_to_live_is_unchanged_with_no_payload_and_no_findings() -> None:
    p = plan([block("schools", "school", record("schools", "school", 2, code="SCI", name="School of Science"))],
             {"school": [SCHOOL_SCI]})
    rec = only(p)
    assert rec.action is Action.UNCHANGED
    assert rec.payload == {} and rec.changes == () and rec.findings == ()
    assert rec.live_id == "s-1" and rec.live_updated_time == 1_700_000_000_000
    assert not p.has_changes


def test_each_block_plan_carries_its_key_fields_for_apply_to_look_records_up_by() -> None:
    p = plan([block("schools", "school", record("schools", "school", 2, code="SCI", name="School of Science"))],
             {"school": [SCHOOL_SCI]})
    assert p.blocks[0].key_fields == ("code",)
    assert plan_from_dict(plan_to_dict(p)).blocks[0].key_fields == ("code",)


def test_keys_match_exactly_and_a_case_folded_match_is_a_near_duplicate_warning_at_the_key_cell() -> None:
    p = plan([block("courses", "course", record("courses", "course", 7, code="eng101", name="Engineering"))],
             {"course": [live_record("c-1", code="ENG101", name="Engineering", type="COURSE")]})
    rec = only(p)
    assert rec.action is Action.CREATE
    (warning,) = rec.warnings
    assert warning.code == "near-duplicate-key"
    assert "will create 'eng101'; a live course has code 'ENG101'" in warning.message
    assert str(warning.where) == "intake.xlsx › courses › A7"


def test_a_key_differing_only_in_spaces_is_also_a_near_duplicate() -> None:
    p = plan([block("courses", "course", record("courses", "course", 3, code="ENG 101", name="Engineering"))],
             {"course": [live_record("c-1", code="ENG101", name="Engineering")]})
    assert codes(only(p), "warning") == ["near-duplicate-key"]


def test_a_key_in_nfd_beside_its_nfc_twin_live_is_a_near_duplicate_saying_so() -> None:
    nfc, nfd = "CAF\u00c9-101", "CAFE\u0301-101"  # the same on screen; macOS exports the second
    p = plan([block("courses", "course", record("courses", "course", 4, code=nfd, name="Café"))],
             {"course": [live_record("c-1", code=nfc, name="Café")]})
    rec = only(p)
    assert rec.action is Action.CREATE
    (warning,) = rec.warnings
    assert warning.code == "near-duplicate-key" and "another Unicode form" in warning.message


def test_record_refs_are_block_and_key_values_and_keep_source_order() -> None:
    p = plan([
        block("schools", "school", *(record("schools", "school", r, code=c, name=c) for r, c in
                                     ((2, "ZED"), (3, "ABC"), (4, "MID")))),
    ])
    assert [r.ref for r in p.records()] == ["schools/ZED", "schools/ABC", "schools/MID"]
    assert [r.row for r in p.records()] == [2, 3, 4]
    assert str(p.records()[0].source) == "intake.xlsx › schools › row 2"


def test_a_key_of_a_number_matches_its_text_live_and_rows_spelling_it_either_way_merge() -> None:
    p = plan([block("schools", "school", record("schools", "school", 2, code=101, name="Science"),
                    record("schools", "school", 3, code="101", name="Science"))],
             {"school": [live_record("s-1", code="101", name="Science")]})
    rec = only(p)
    assert (rec.ref, rec.key, rec.live_id, rec.action) == ("schools/101", (101,), "s-1", Action.UNCHANGED)
    assert rec.also_rows == (("schools", 3),)


def test_a_key_whose_reference_does_not_resolve_is_near_no_live_record() -> None:
    live = {"applicant": [live_record("a-1", external_id="A1")],
            "credential": [live_record("k-1", applicant_id="a-1", type="TERTIARY", name="Diploma")]}
    desired = record("credentials", "credential", 4, key_fields=("applicant_id", "type", "name"),
                     applicant_id=Ref("applicant", ("A9",), ("external_id",)), type="TERTIARY", name="Diploma")
    rec = only(plan([block("credentials", "credential", desired, key_fields=("applicant_id", "type", "name"))], live))
    assert rec.action is Action.CREATE and codes(rec, "error") == ["unresolved-reference"]
    assert codes(rec, "warning") == []


# ---- managed fields -------------------------------------------------------------------------


def test_only_managed_fields_are_compared_and_sent() -> None:
    live = live_record("s-1", code="SCI", name="Old name", description="kept as is", year=2026)
    rec = only(plan([block("schools", "school", record("schools", "school", 2, code="SCI", name="New name"))],
                    {"school": [live]}))
    assert rec.action is Action.UPDATE
    assert rec.payload == {"name": "New name"}
    assert [(c.field, c.old, c.new) for c in rec.changes] == [("name", "Old name", "New name")]


def test_an_update_sends_the_live_custom_attribute_map_with_only_managed_labels_changed() -> None:
    live = live_record("s-1", code="SCI", name="Science",
                       custom_attributes={"Faculty": "Old", "Legacy ID": "S-0042", "Same": "x"})
    desired = record("schools", "school", 2, code="SCI", custom_attributes={"Faculty": "New", "Same": "x"})
    rec = only(plan([block("schools", "school", desired)], {"school": [live]}))
    assert rec.payload == {"custom_attributes": {"Faculty": "New", "Legacy ID": "S-0042", "Same": "x"}}
    assert [(c.field, c.old, c.new) for c in rec.changes] == [("custom_attributes.Faculty", "Old", "New")]


def test_a_cleared_custom_attribute_label_is_removed_from_the_map_sent() -> None:
    live = live_record("s-1", code="SCI", custom_attributes={"Faculty": "Old", "Legacy ID": "S-0042"})
    desired = record("schools", "school", 2, code="SCI", custom_attributes={"Faculty": None})
    rec = only(plan([block("schools", "school", desired)], {"school": [live]}))
    assert rec.payload == {"custom_attributes": {"Legacy ID": "S-0042"}}


def test_equal_custom_attributes_send_nothing() -> None:
    live = live_record("s-1", code="SCI", custom_attributes={"Credit Points": "6"})
    desired = record("schools", "school", 2, code="SCI", custom_attributes={"Credit Points": 6})
    assert only(plan([block("schools", "school", desired)], {"school": [live]})).action is Action.UNCHANGED


def test_set_like_lists_compare_as_sets_and_are_sent_sorted() -> None:
    live = [live_record("a-1", external_id="A1", eligible_deliveries=["Online", "On campus"])]
    same_set = record("applicants", "applicant", 2, key_fields=("external_id",), external_id="A1",
                      eligible_deliveries=["On campus", "Online"])
    assert only(plan([block("applicants", "applicant", same_set, key_fields=("external_id",))],
                     {"applicant": live})).action is Action.UNCHANGED
    other_set = record("applicants", "applicant", 2, key_fields=("external_id",), external_id="A1",
                       eligible_deliveries=["Online", "Intensive", "On campus"])
    rec = only(plan([block("applicants", "applicant", other_set, key_fields=("external_id",))],
                    {"applicant": live}))
    assert rec.payload == {"eligible_deliveries": ["Intensive", "On campus", "Online"]}


def test_set_like_lists_of_other_texts_that_normalise_alike_are_the_same_set() -> None:
    live = [live_record("a-1", external_id="A1", eligible_deliveries=["Online", "2026-02-01T00:00:00Z"])]
    desired = record("applicants", "applicant", 2, key_fields=("external_id",), external_id="A1",
                     eligible_deliveries=["2026-02-01", "", "Online"])
    assert only(plan([block("applicants", "applicant", desired, key_fields=("external_id",))],
                     {"applicant": live})).action is Action.UNCHANGED


@pytest.mark.parametrize(
    ("desired", "live"),
    [("101", 101), (6, "6"), (6.0, "6"), (None, None), ("2007-03-14", "2007-03-14T00:00:00Z"), ("", None)],
)
def test_values_are_normalised_before_comparing(desired: Any, live: Any) -> None:
    live_rec = live_record("a-1", external_id="A1", date_of_birth=live)
    desired_rec = record("applicants", "applicant", 2, key_fields=("external_id",), external_id="A1",
                         date_of_birth=desired)
    rec = only(plan([block("applicants", "applicant", desired_rec, key_fields=("external_id",))],
                    {"applicant": [live_rec]}))
    assert rec.action is Action.UNCHANGED


def test_a_field_absent_live_and_cleared_in_the_source_is_unchanged_but_a_live_value_is_cleared() -> None:
    desired = record("schools", "school", 2, code="SCI", description=None)
    assert only(plan([block("schools", "school", desired)],
                     {"school": [live_record("s-1", code="SCI")]})).action is Action.UNCHANGED
    rec = only(plan([block("schools", "school", desired)],
                    {"school": [live_record("s-1", code="SCI", description="old")]}))
    assert rec.payload == {"description": None}


# ---- read-only, create-only, immutable, forbidden, only_when ------------------------------


def test_a_create_only_field_that_differs_is_a_warning_never_an_update() -> None:
    live = live_record("u-1", code="MATH2001", name="Real Analysis", access="Restricted")
    desired = record("subjects", "subject", 9, code="MATH2001", name="Real Analysis", access="Open")
    rec = only(plan([block("subjects", "subject", desired)], {"subject": [live]}))
    assert rec.action is Action.UNCHANGED and rec.payload == {}
    (warning,) = rec.warnings
    assert warning.code == "read-only-field" and "can only be set at creation" in warning.message
    assert str(warning.where) == "intake.xlsx › subjects › C9"


def test_a_create_only_field_is_sent_on_create_but_read_only_fields_are_not() -> None:
    desired = record("subjects", "subject", 9, code="MATH2001", name="Real Analysis", access="Open",
                     type="SUBJECT")
    rec = only(plan([block("subjects", "subject", desired)]))
    assert rec.action is Action.CREATE
    assert rec.payload == {"code": "MATH2001", "name": "Real Analysis", "access": "Open"}


def test_an_immutable_field_differing_from_live_is_an_error_for_that_record() -> None:
    applicant = live_record("a-1", external_id="A1")
    cred = live_record("k-1", applicant_id="a-1", type="TERTIARY", name="Diploma")
    desired = record("credentials", "credential", 4, key_fields=("applicant_id", "name"),
                     applicant_id=Ref("applicant", ("A1",), ("external_id",)), name="Diploma", type="SUBJECT")
    rec = only(plan([block("credentials", "credential", desired, key_fields=("applicant_id", "name"))],
                    {"applicant": [applicant], "credential": [cred]}))
    assert codes(rec, "error") == ["immutable-field"]
    assert rec.blocked and "type" not in rec.payload


def test_credentials_match_live_through_their_resolved_applicant_reference() -> None:
    applicant = live_record("a-1", external_id="A1")
    cred = live_record("k-1", applicant_id="a-1", type="TERTIARY", name="Diploma", result="5.0")
    desired = record("credentials", "credential", 4, key_fields=("applicant_id", "type", "name"),
                     applicant_id=Ref("applicant", ("A1",), ("external_id",)), type="TERTIARY", name="Diploma",
                     result="6.0")
    rec = only(plan([block("credentials", "credential", desired, key_fields=("applicant_id", "type", "name"))],
                    {"applicant": [applicant], "credential": [cred]}))
    assert rec.action is Action.UPDATE and rec.live_id == "k-1"
    assert rec.payload == {"result": "6.0"}
    assert rec.ref == "credentials/A1/TERTIARY/Diploma" and rec.key == ("A1", "TERTIARY", "Diploma")


def test_credential_parent_is_an_error_at_its_cell_unless_the_type_is_subject() -> None:
    parent = Ref("credential", ("k-9",), ("id",))
    desired = record("credentials", "credential", 5, key_fields=("applicant_id", "type", "name"),
                     applicant_id=Ref("applicant", ("A1",), ("external_id",)), type="TERTIARY", name="Diploma",
                     parent=parent)
    live = {"applicant": [live_record("a-1", external_id="A1")], "credential": [live_record("k-9")]}
    rec = only(plan([block("credentials", "credential", desired, key_fields=("applicant_id", "type", "name"))],
                    live))
    (error,) = rec.errors
    assert error.code == "field-not-allowed" and "only be set when type is SUBJECT" in error.message
    assert str(error.where) == "intake.xlsx › credentials › D5"
    subject = record("credentials", "credential", 5, key_fields=("applicant_id", "type", "name"),
                     applicant_id=Ref("applicant", ("A1",), ("external_id",)), type="SUBJECT", name="Maths",
                     parent=parent)
    ok = only(plan([block("credentials", "credential", subject, key_fields=("applicant_id", "type", "name"))],
                   live))
    assert ok.errors == () and ok.payload["parent"] == {"id": "k-9"}


def test_a_forbidden_field_is_an_error() -> None:
    desired = record("arrangements", "arrangement", 2, code="ART-1", name="A", exemption="yes")
    assert codes(only(plan([block("arrangements", "arrangement", desired)])), "error") == ["forbidden-field"]


# ---- status ---------------------------------------------------------------------------------


def test_a_new_arrangement_is_created_without_status_then_walks_the_legal_path() -> None:
    desired = record("arrangements", "arrangement", 2, code="ART-1", name="A", status="ACTIVE")
    rec = only(plan([block("arrangements", "arrangement", desired)]))
    assert rec.action is Action.CREATE
    assert "status" not in rec.payload
    assert rec.status_path == ("READY", "ACTIVE")


def test_a_live_ready_arrangement_wanted_active_is_an_update_with_a_one_step_path() -> None:
    live = live_record("r-1", code="ART-1", name="A", status="READY")
    rec = only(plan([block("arrangements", "arrangement",
                           record("arrangements", "arrangement", 2, code="ART-1", name="A", status="ACTIVE"))],
                    {"arrangement": [live]}))
    assert rec.action is Action.UPDATE and rec.payload == {} and rec.status_path == ("ACTIVE",)
    assert [(c.field, c.old, c.new) for c in rec.changes] == [("status", "READY", "ACTIVE")]
    assert rec.has_changes


def test_an_arrangement_already_in_the_desired_status_is_unchanged() -> None:
    live = live_record("r-1", code="ART-1", name="A", status="ACTIVE")
    rec = only(plan([block("arrangements", "arrangement",
                           record("arrangements", "arrangement", 2, code="ART-1", name="A", status="ACTIVE"))],
                    {"arrangement": [live]}))
    assert rec.action is Action.UNCHANGED and rec.status_path == ()


def test_an_illegal_status_move_is_an_error_naming_both_states() -> None:
    live = live_record("r-1", code="ART-1", name="A", status="INACTIVE")
    rec = only(plan([block("arrangements", "arrangement",
                           record("arrangements", "arrangement", 2, code="ART-1", name="A", status="ACTIVE"))],
                    {"arrangement": [live]}))
    (error,) = rec.errors
    assert error.code == "illegal-status-change"
    assert "from INACTIVE to ACTIVE" in error.message and str(error.where) == "intake.xlsx › arrangements › C2"


# ---- uniqueness and the source ---------------------------------------------------------------


def test_a_code_used_live_by_another_curriculum_type_is_an_error_naming_it() -> None:
    desired = record("courses", "course", 4, code="SCI", name="Science course")
    rec = only(plan([block("courses", "course", desired)], {"school": [SCHOOL_SCI]}))
    (error,) = rec.errors
    assert error.code == "code-in-use"
    assert "SCHOOL s-1 'School of Science'" in error.message and str(error.where) == "intake.xlsx › courses › A4"


def test_two_desired_records_of_different_types_claiming_one_code_are_both_errors() -> None:
    p = plan([block("schools", "school", record("schools", "school", 2, code="X1", name="School X")),
              block("courses", "course", record("courses", "course", 3, code="X1", name="Course X"))])
    assert [codes(r, "error") for r in p.records()] == [["code-in-use"], ["code-in-use"]]


def test_one_key_given_different_values_in_two_blocks_is_an_error_naming_both_cells() -> None:
    first = record("flat_a", "school", 2, code="SCI", name="Science")
    second = record("flat_b", "school", 9, code="SCI", name="Sciences")
    p = plan([block("flat_a", "school", first), block("flat_b", "school", second)])
    rec = only(p)
    (error,) = rec.errors
    assert error.code == "conflicting-source-values"
    assert "intake.xlsx › flat_a › B2" in error.message and "intake.xlsx › flat_b › B9" in error.message


def test_conflicting_list_references_are_shown_by_their_codes() -> None:
    first = record("flat_a", "arrangement", 2, code="ART-1",
                   subjects_awarded=(Ref("subject", ("MATH1",)), Ref("subject", ("STAT1",))))
    second = record("flat_b", "arrangement", 9, code="ART-1", subjects_awarded=(Ref("subject", ("MATH1",)),))
    live = {"subject": [live_record("u-1", code="MATH1"), live_record("u-2", code="STAT1")]}
    p = plan([block("flat_a", "arrangement", first), block("flat_b", "arrangement", second)], live)
    (error,) = only(p).errors
    assert "different subjects_awarded values: ['MATH1', 'STAT1'] at" in error.message
    assert "Ref(" not in error.message


def test_a_reference_is_displayed_by_its_values_everywhere() -> None:
    assert display_value(Ref("credential", ("A1", "TERTIARY", "HSC"))) == "A1/TERTIARY/HSC"
    assert display_value((Ref("subject", ("MATH1",)), "x", 6)) == ["MATH1", "x", 6]
    assert display_value(6.5) == 6.5 and display_value(None) is None
    assert show_key(("A1", Ref("subject", ("MATH1",)), 7)) == "A1/MATH1/7"


def test_identical_rows_of_one_key_in_two_blocks_merge_into_one_record() -> None:
    first = record("flat_a", "school", 2, code="SCI", name="Science")
    second = record("flat_b", "school", 9, code="SCI", custom_attributes={"Faculty": "F"})
    p = plan([block("flat_a", "school", first), block("flat_b", "school", second)])
    rec = only(p)
    assert rec.errors == () and rec.block == "flat_a"
    assert rec.payload == {"code": "SCI", "name": "Science", "custom_attributes": {"Faculty": "F"}}
    assert [b.records for b in p.blocks][1] == ()


def test_live_records_absent_from_the_source_are_counted_once_per_entity() -> None:
    live = {"school": [SCHOOL_SCI, live_record("s-2", code="HUM"), live_record("s-3", code="BUS")]}
    p = plan([block("a", "school", record("a", "school", 2, code="SCI", name="School of Science")),
              block("b", "school", record("b", "school", 2, code="LAW", name="Law"))], live)
    assert [b.not_in_source for b in p.blocks] == [2, 0]
    assert p.blocks[0].not_in_source_records == (NotInSource(("HUM",), "s-2"), NotInSource(("BUS",), "s-3"))


def test_a_live_record_whose_row_errors_left_out_is_blocked_not_absent_from_the_source() -> None:
    live = {"school": [SCHOOL_SCI, live_record("s-2", code="HUM"), live_record("s-3", code="BUS")]}
    error = Finding("error", "bad-value", "name: too long", CellRef("intake.xlsx", "schools", "B3", 3))
    left = (LeftOut(CellRef("intake.xlsx", "schools", None, 3), ("HUM",), (error,)),
            LeftOut(CellRef("intake.xlsx", "schools", None, 4), None, (error,)),  # its key cell unreadable
            LeftOut(CellRef("intake.xlsx", "schools", None, 5), ("NEW",), (error,)))  # not live either
    schools = Block("schools", "school", ("code",), (record("schools", "school", 2, code="SCI", name="Science"),),
                    sheet="schools", findings=(error,), left_out=left)
    p = plan([schools], live)
    (b,) = p.blocks
    assert b.not_in_source_records == (NotInSource(("BUS",), "s-3"),)
    assert [(r.row, r.key, r.live_id) for r in b.blocked_rows] == [(3, ("HUM",), "s-2"), (4, None, None),
                                                                   (5, ("NEW",), None)]
    assert b.blocked == 3 and b.blocked_rows[0].errors == (error,)
    assert plan_from_dict(plan_to_dict(p)) == p


# ---- references and blocking ----------------------------------------------------------------


def test_a_reference_resolves_to_the_live_id_in_the_profile_shape() -> None:
    desired = record("courses", "course", 3, code="BSC", name="Bachelor of Science", parent=Ref("school", ("SCI",)))
    rec = only(plan([block("courses", "course", desired)], {"school": [SCHOOL_SCI]}))
    assert rec.payload["parent"] == {"id": "s-1"} and rec.depends_on == ()
    assert ("parent", None, "SCI") in [(c.field, c.old, c.new) for c in rec.changes]


def test_a_reference_to_a_record_this_plan_creates_is_pending_and_a_dependency() -> None:
    p = plan([
        block("schools", "school", record("schools", "school", 2, code="HLT", name="Health")),
        block("courses", "course", record("courses", "course", 3, code="BHLTH", name="BHealth",
                                          parent=Ref("school", ("HLT",)))),
    ])
    course = p.records()[1]
    assert course.payload["parent"] == {"id": PendingId("schools/HLT")}
    assert course.depends_on == ("schools/HLT",)


def test_a_reference_to_a_live_record_of_this_plan_is_noted_for_stale_checks_not_as_a_dependency() -> None:
    p = plan([
        block("schools", "school", record("schools", "school", 2, code="SCI", name="School of Science")),
        block("courses", "course", record("courses", "course", 3, code="BSC", name="BSc",
                                          parent=Ref("school", ("SCI",)))),
    ], {"school": [SCHOOL_SCI]})
    course = p.records()[1]
    assert course.payload["parent"] == {"id": "s-1"}
    assert course.depends_on == () and course.refers_to == ("schools/SCI",)
    assert plan_from_dict(plan_to_dict(p)).records()[1].refers_to == ("schools/SCI",)


def test_records_referring_to_one_record_alone_share_one_tuple_of_it() -> None:
    p = plan([
        block("schools", "school", record("schools", "school", 2, code="SCI", name="School of Science"),
              record("schools", "school", 3, code="HLT", name="Health")),
        block("courses", "course",
              *(record("courses", "course", row, code=f"C{row}", name="C", parent=Ref("school", (school,)))
                for row, school in ((2, "SCI"), (3, "SCI"), (4, "HLT"), (5, "HLT")))),
    ], {"school": [SCHOOL_SCI]})
    first, second, third, fourth = p.records()[2:]
    assert first.refers_to == ("schools/SCI",) and first.refers_to is second.refers_to
    assert third.depends_on == ("schools/HLT",) and third.depends_on is fourth.depends_on
    assert third.refers_to == fourth.refers_to == () and first.depends_on == second.depends_on == ()


def test_a_changed_reference_shows_the_live_code_as_its_old_value() -> None:
    live = {"school": [SCHOOL_SCI, live_record("s-2", code="HUM")],
            "course": [live_record("c-1", code="BSC", parent={"id": "s-2"})]}
    rec = only(plan([block("courses", "course", record("courses", "course", 3, code="BSC",
                                                        parent=Ref("school", ("SCI",))))], live))
    assert rec.payload == {"parent": {"id": "s-1"}}
    assert [(c.field, c.old, c.new) for c in rec.changes] == [("parent", "HUM", "SCI")]


def test_list_references_resolve_to_ids_and_compare_as_sets() -> None:
    live = {"subject": [live_record("u-1", code="MATH1001"), live_record("u-2", code="STAT1001")],
            "arrangement": [live_record("r-1", code="ART-1", subjects_awarded=["u-2", "u-1"])]}
    refs = (Ref("subject", ("MATH1001",)), Ref("subject", ("STAT1001",)))
    rec = only(plan([block("arrangements", "arrangement",
                           record("arrangements", "arrangement", 2, code="ART-1", subjects_awarded=refs))], live))
    assert rec.action is Action.UNCHANGED
    more = (*refs, Ref("subject", ("NEW1",)))
    p = plan([block("subjects", "subject", record("subjects", "subject", 2, code="NEW1", name="New")),
              block("arrangements", "arrangement",
                    record("arrangements", "arrangement", 2, code="ART-1", subjects_awarded=more))], live)
    arrangement = p.records()[1]
    assert arrangement.payload == {"subjects_awarded": ["u-1", "u-2", PendingId("subjects/NEW1")]}
    assert arrangement.depends_on == ("subjects/NEW1",)


def test_a_reference_to_an_entity_the_field_does_not_take_is_an_error_at_its_cell() -> None:
    desired = record("courses", "course", 3, code="BSC", name="BSc", parent=Ref("program", ("P1",)))
    rec = only(plan([block("courses", "course", desired)], {"program": [live_record("p-1", code="P1")]}))
    (error,) = rec.errors
    assert (error.code, error.message) == ("wrong-reference", "parent refers to school or course, not program")
    assert str(error.where) == "intake.xlsx › courses › C3" and "parent" not in rec.payload


def test_one_reference_in_a_list_reference_field_is_sent_and_compared_as_a_list() -> None:
    live = {"applicant": [live_record("a-1", external_id="A1")],
            "tag": [live_record("t-1", name="International"), live_record("t-2", name="Scholarship")]}

    def credential(tag: str) -> Block:
        return block("credentials", "credential",
                     record("credentials", "credential", 4, key_fields=("applicant_id", "type", "name"),
                            applicant_id=Ref("applicant", ("A1",), ("external_id",)), type="TERTIARY", name="HSC",
                            tags=Ref("tag", (tag,), ("name",))),
                     key_fields=("applicant_id", "type", "name"))

    assert only(plan([credential("International")], live)).payload["tags"] == ["t-1"]
    live["credential"] = [live_record("k-1", applicant_id="a-1", type="TERTIARY", name="HSC", tags=["t-1"])]
    assert only(plan([credential("International")], live)).action is Action.UNCHANGED
    changed = only(plan([credential("Scholarship")], live))
    assert changed.payload == {"tags": ["t-2"]}
    assert [(c.field, c.old, c.new) for c in changed.changes] == [("tags", ["International"], "Scholarship")]


def test_a_key_referring_to_its_own_record_matches_nothing_live_and_is_a_cycle() -> None:
    desired = record("schools", "school", 2, key_fields=("parent",), parent=Ref("school", ("A",), ("parent",)))
    rec = only(plan([block("schools", "school", desired, key_fields=("parent",))],
                    {"school": [live_record("s-1", code="A", parent={"id": "A"})]}))
    assert rec.action is Action.CREATE and rec.live_id is None
    assert codes(rec, "error") == ["reference-cycle"]


def test_an_unresolved_reference_is_an_error_at_its_cell_with_a_suggestion() -> None:
    cell = CellRef("intake.xlsx", "arrangements", "D2", 2)
    desired = record("arrangements", "arrangement", 2, code="ART-1", name="A",
                     subjects_awarded=(Ref("subject", ("MATH9",), cell=cell),))
    rec = only(plan([block("arrangements", "arrangement", desired)],
                    {"subject": [live_record("u-1", code="MATH09")]}))
    (error,) = rec.errors
    assert error.code == "unresolved-reference"
    assert error.message == "no subject with code 'MATH9' in the source or live; did you mean 'MATH09'?"
    assert str(error.where) == "intake.xlsx › arrangements › D2"


def test_tags_resolve_by_name_to_tag_ids() -> None:
    live = {"applicant": [live_record("a-1", external_id="A1")],
            "tag": [live_record("t-1", name="International"), live_record("t-2", name="Scholarship")]}
    desired = record("credentials", "credential", 4, key_fields=("applicant_id", "type", "name"),
                     applicant_id=Ref("applicant", ("A1",), ("external_id",)), type="TERTIARY", name="HSC",
                     tags=(Ref("tag", ("Scholarship",), ("name",)), Ref("tag", ("International",), ("name",))))
    rec = only(plan([block("credentials", "credential", desired, key_fields=("applicant_id", "type", "name"))], live))
    assert rec.payload == {"applicant_id": "a-1", "type": "TERTIARY", "name": "HSC", "tags": ["t-1", "t-2"]}


def test_errors_block_the_record_and_everything_depending_on_it_transitively() -> None:
    p = plan([
        block("schools", "school", record("schools", "school", 2, code="X1", name="X",
                                          parent=Ref("school", ("NOPE",)))),
        block("courses", "course", record("courses", "course", 3, code="C1", name="C", parent=Ref("school", ("X1",)))),
        block("programs", "program", record("programs", "program", 4, code="P1", name="P",
                                            parent=Ref("course", ("C1",)))),
        block("other", "school", record("other", "school", 5, code="OK", name="fine")),
    ])
    school, course, program, other = p.records()
    assert school.blocked and course.blocked and program.blocked and not other.blocked
    assert course.errors[-1].code == "blocked" and "schools/X1" in course.errors[-1].message
    assert "courses/C1" in program.errors[-1].message and "schools/X1" in program.errors[-1].message
    assert p.has_errors and p.has_changes


def test_new_records_referring_to_each_other_in_a_cycle_are_errors_and_the_rest_stays_applicable() -> None:
    p = plan([
        block("schools", "school",
              record("schools", "school", 2, code="A", name="A", parent=Ref("school", ("B",))),
              record("schools", "school", 3, code="B", name="B", parent=Ref("school", ("A",))),
              record("schools", "school", 4, code="C", name="C")),
        block("courses", "course", record("courses", "course", 5, code="D", name="D", parent=Ref("school", ("A",)))),
    ])
    a, b, c, d = p.records()
    (cycle_a,), (cycle_b,) = a.errors, b.errors
    assert (cycle_a.code, str(cycle_a.where)) == ("reference-cycle", "intake.xlsx › schools › C2")
    assert "schools/A → schools/B → schools/A" in cycle_a.message
    assert (cycle_b.code, str(cycle_b.where)) == ("reference-cycle", "intake.xlsx › schools › C3")
    assert "schools/B → schools/A → schools/B" in cycle_b.message
    assert a.blocked and b.blocked and d.blocked and not c.blocked and not c.errors
    assert [f.code for f in d.errors] == ["blocked"] and "schools/A" in d.errors[0].message
    assert build_graph(p.records()).refs == ("schools/A", "schools/B", "schools/C", "courses/D")
    assert p.has_errors and p.has_changes


def test_a_new_record_referring_to_itself_is_a_reference_cycle() -> None:
    itself = record("schools", "school", 2, code="A", parent=Ref("school", ("A",)))
    rec = only(plan([block("schools", "school", itself)]))
    (error,) = rec.errors
    assert error.code == "reference-cycle" and str(error.where) == "intake.xlsx › schools › B2"
    assert "schools/A refers to itself" in error.message
    build_graph([rec])


def test_a_longer_cycle_names_the_shortest_cycle_through_each_record() -> None:
    schools = [record("schools", "school", n, code=code, parent=Ref("school", (parent,)))
               for n, (code, parent) in enumerate([("A", "B"), ("B", "C"), ("C", "A"), ("E", "A")], start=2)]
    a, _, c, e = plan([block("schools", "school", *schools)]).records()
    assert "schools/A → schools/B → schools/C → schools/A" in a.errors[0].message
    assert "schools/C → schools/A → schools/B → schools/C" in c.errors[0].message
    assert [f.code for f in e.errors] == ["blocked"]


def _draft(ref: str, *depends_on: str, error: bool = False) -> RecordPlan:
    place = CellRef("intake.xlsx", "b", row=2)
    findings = (Finding("error", "unresolved-reference", "no such thing", place),) if error else ()
    return RecordPlan(ref, "b", "school", (ref,), Action.CREATE, {}, place, depends_on=depends_on, findings=findings)


def test_blocking_walks_every_dependant_even_through_a_cycle() -> None:
    drafts = {"A": _draft("A", "B", "C"), "B": _draft("B", "A"), "C": _draft("C", error=True), "D": _draft("D")}
    out = block_dependents(drafts)
    assert [ref for ref, r in out.items() if r.blocked] == ["A", "B", "C"]
    assert out["A"].errors[-1].message == "blocked: depends on C, which cannot be applied"
    assert out["B"].errors[-1].message == "blocked: depends on A, which cannot be applied (errors in C)"
    assert out["C"].findings == drafts["C"].findings and out["D"] == drafts["D"]


def test_two_blocks_with_one_name_are_a_plan_error() -> None:
    p = plan([block("schools", "school", record("schools", "school", 2, code="A", name="A")),
              block("schools", "course", record("schools", "course", 2, code="B", name="B"))])
    assert [f.code for f in p.findings] == ["repeated-block-name"] and p.has_errors
    assert [[r.key for r in b.records] for b in p.blocks] == [[("A",)], [("B",)]]


def test_two_blocks_of_one_name_with_findings_on_the_same_ref_give_the_repeated_name_error() -> None:
    """Refs start with the block name, so two blocks named alike can share a ref; planning them must
    still end in the plan's error for the repeated name (it once raised from zipping the records)."""
    from helpers.plan import Block

    from loader.places import CellRef
    from loader.plan.diff import PlanHeader, plan_changes
    from loader.profile import load_profile
    from loader.source.records import DesiredRecord

    def one(entity: str, field: str) -> Block:
        record = DesiredRecord("x", entity, ("s1",), {field: "s1"}, CellRef("f.xlsx", "S", None, 2))
        return Block("x", entity, (field,), (record,))

    live = {"school": [{"id": "1", "code": "S1", "type": "SCHOOL"}], "applicant": [{"id": "2", "external_id": "S1"}]}
    plan = plan_changes([one("school", "code"), one("applicant", "external_id")], live, load_profile(),
                        header=PlanHeader("sandbox"))
    assert [f.code for f in plan.findings] == ["repeated-block-name"]
    assert [len(b.records) for b in plan.blocks] == [1, 1]
    assert all(r.warnings for r in plan.records())  # each near its live record: both are linked
