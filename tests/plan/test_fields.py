"""One record's fields against its live record (loader.plan.fields): payload, field changes, findings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loader.places import CellRef
from loader.plan.compare import merge_labels, same
from loader.plan.field_plan import FieldPlan
from loader.plan.field_values import same_as_live, send_form, unshape
from loader.plan.fields import FieldKind, FieldRules, plan_fields
from loader.plan.model import FieldChange, PendingId
from loader.plan.resolve import Entry, Resolver
from loader.profile import load_profile
from loader.record_fields import CUSTOM
from loader.source.records import DesiredRecord, Ref

PROFILE = load_profile()
COLUMNS = "ABCDEFGHIJ"


def record(entity: str, pii: Sequence[str] = (), key_fields: Sequence[str] = ("code",), **fields: Any) -> DesiredRecord:
    """A desired record of row 5, its fields in columns A, B, ... (custom attribute labels after them)."""
    names = [*fields, *(f"{CUSTOM}.{label}" for label in fields.get(CUSTOM) or {})]
    cells = {n: CellRef("intake.xlsx", entity, f"{COLUMNS[i]}5", 5) for i, n in enumerate(names)}
    key = tuple(fields.get(k) for k in key_fields)
    return DesiredRecord(entity, entity, key, fields, CellRef("intake.xlsx", entity, None, 5), cells, frozenset(pii))


def compared(
    rec: DesiredRecord, live: Mapping[str, Any] | None,
    live_collections: Mapping[str, Sequence[Mapping[str, Any]]] | None = None, others: Sequence[Entry] = (),
) -> FieldPlan:
    """plan_fields of `rec` against `live`, references resolved over `others` and `live_collections`."""
    resolver = Resolver(list(others), live_collections or {})
    return plan_fields(rec, live, FieldRules(PROFILE.entity(rec.entity)), resolver)


def changes(out: FieldPlan) -> list[tuple[str, Any, Any]]:
    return [(c.field, c.old, c.new) for c in out.changes]


def findings(out: FieldPlan) -> list[tuple[str, str, str]]:
    return [(f.severity, f.code, str(f.where)) for f in out.findings]


# ---- managed fields ------------------------------------------------------------------------


def test_only_the_fields_the_record_manages_are_compared_and_sent() -> None:
    live = {"id": "s-1", "code": "SCI", "name": "Old", "description": "not managed", "year": 2026}
    out = compared(record("school", code="SCI", name="New"), live)
    assert out.payload == {"name": "New"}
    assert changes(out) == [("name", "Old", "New")]
    assert out.findings == () and out.status_path == () and not out.status_changed


def test_a_record_equal_to_live_gives_no_payload_no_changes_and_no_findings() -> None:
    out = compared(record("school", code="SCI", name="Science"), {"id": "s-1", "code": "SCI", "name": "Science"})
    assert out.payload == {} and out.changes == [] and out.findings == ()


def test_a_new_record_sends_every_field_with_a_value_but_no_empty_ones() -> None:
    out = compared(record("school", code="SCI", name="Science", description=None, year=2026), None)
    assert out.payload == {"code": "SCI", "name": "Science", "year": 2026}
    assert changes(out) == [("code", None, "SCI"), ("name", None, "Science"), ("year", None, 2026)]


def test_a_field_marked_pii_is_marked_on_its_change() -> None:
    out = compared(record("applicant", pii=("given_name",), key_fields=("external_id",), external_id="A1",
                          given_name="Ada"), {"id": "a-1", "external_id": "A1", "given_name": "Eda"})
    assert out.changes == [FieldChange("given_name", "Eda", "Ada", pii=True)]


@pytest.mark.parametrize(
    ("desired", "live"), [("101", 101), (6.0, "6"), ("", None), ("2007-03-14", "2007-03-14T00:00:00Z")]
)
def test_values_that_normalise_alike_are_no_change(desired: Any, live: Any) -> None:
    out = compared(record("applicant", key_fields=("external_id",), external_id="A1", date_of_birth=desired),
                   {"id": "a-1", "external_id": "A1", "date_of_birth": live})
    assert out.payload == {} and out.changes == []


def test_a_field_cleared_in_the_source_clears_its_live_value() -> None:
    out = compared(record("school", code="SCI", description=None), {"id": "s-1", "code": "SCI", "description": "x"})
    assert out.payload == {"description": None}
    assert changes(out) == [("description", "x", None)]


def test_each_field_is_of_one_kind_worked_out_once() -> None:
    rules = FieldRules(PROFILE.entity("arrangement"))
    assert [rules.kind(n) for n in ("name", CUSTOM, "subjects_awarded", "status", "exemption")] == [
        FieldKind.PLAIN, FieldKind.LABELS, FieldKind.REFERENCE, FieldKind.SPECIAL, FieldKind.SPECIAL]
    assert FieldRules(PROFILE.entity("credential")).kind("parent") is FieldKind.SPECIAL  # only_when
    names = ("name", CUSTOM, "subjects_awarded", "status", "exemption")
    handlers = [rules.handler(n) for n in names]
    assert handlers[3] is handlers[4] and len(set(handlers)) == 4  # one handler a kind
    assert set(rules.handlers) == set(names)  # each name's handler kept once worked out


# ---- custom attributes, label by label -----------------------------------------------------


def test_an_update_sends_the_whole_live_label_map_with_only_the_managed_labels_changed() -> None:
    live = {"id": "s-1", "code": "SCI", CUSTOM: {"Faculty": "Old", "Legacy ID": "S-42", "Same": "x"}}
    out = compared(record("school", code="SCI", custom_attributes={"Faculty": "New", "Same": "x"}), live)
    assert out.payload == {CUSTOM: {"Faculty": "New", "Legacy ID": "S-42", "Same": "x"}}
    assert changes(out) == [(f"{CUSTOM}.Faculty", "Old", "New")]


def test_a_label_cleared_in_the_source_is_left_out_of_the_map_sent() -> None:
    live = {"id": "s-1", "code": "SCI", CUSTOM: {"Faculty": "Old", "Legacy ID": "S-42"}}
    out = compared(record("school", code="SCI", custom_attributes={"Faculty": None}), live)
    assert out.payload == {CUSTOM: {"Legacy ID": "S-42"}}
    assert changes(out) == [(f"{CUSTOM}.Faculty", "Old", None)]


def test_labels_equal_to_live_once_normalised_send_nothing() -> None:
    live = {"id": "s-1", "code": "SCI", CUSTOM: {"Credit Points": "6", "Other": "kept"}}
    out = compared(record("school", code="SCI", custom_attributes={"Credit Points": 6}), live)
    assert out.payload == {} and out.changes == []


def test_a_new_records_labels_are_sent_but_its_empty_ones() -> None:
    out = compared(record("school", code="SCI", custom_attributes={"Faculty": "Science", "Empty": "", "None": None}),
                   None)
    assert out.payload == {"code": "SCI", CUSTOM: {"Faculty": "Science"}}
    assert changes(out)[1:] == [(f"{CUSTOM}.Faculty", None, "Science")]


def test_a_label_is_pii_when_it_or_the_whole_map_is_marked() -> None:
    live = {"id": "s-1", "code": "SCI", CUSTOM: {"A": "1", "B": "1"}}
    one = compared(record("school", pii=(f"{CUSTOM}.A",), code="SCI", custom_attributes={"A": "2", "B": "2"}), live)
    assert [(c.field, c.pii) for c in one.changes] == [(f"{CUSTOM}.A", True), (f"{CUSTOM}.B", False)]
    whole = compared(record("school", pii=(CUSTOM,), code="SCI", custom_attributes={"A": "2", "B": "2"}), live)
    assert all(c.pii for c in whole.changes)


_label_texts = st.sampled_from(["", "x", "X", "6", "2026-01-01", "2026-01-01T00:00:00Z"])
_label_values = st.none() | _label_texts | st.integers(5, 7)
_labels = st.dictionaries(st.sampled_from(["A", "B", "C"]), _label_values, max_size=3)


@given(_labels, st.none() | _labels)
def test_the_labels_sent_are_what_merge_labels_gives_against_the_live_map(desired: dict[str, Any],
                                                                          live_labels: dict[str, Any] | None) -> None:
    live = None if live_labels is None else {"id": "s-1", "code": "SCI", CUSTOM: live_labels}
    out = compared(record("school", code="SCI", custom_attributes=desired), live)
    merged, changed = merge_labels(live_labels, desired)
    if changed:
        assert out.payload[CUSTOM] == merged
    else:
        assert CUSTOM not in out.payload
    assert [c.field for c in out.changes if c.field.startswith(CUSTOM)] == [f"{CUSTOM}.{label}" for label in changed]


# ---- set-like lists ------------------------------------------------------------------------


def test_a_set_like_list_in_another_order_is_no_change_and_a_changed_one_is_sent_sorted() -> None:
    live = {"id": "a-1", "external_id": "A1", "eligible_deliveries": ["Online", "On campus"]}
    same_set = record("applicant", key_fields=("external_id",), external_id="A1",
                      eligible_deliveries=["On campus", "Online"])
    assert compared(same_set, live).payload == {}
    other = record("applicant", key_fields=("external_id",), external_id="A1",
                   eligible_deliveries=["Online", "Intensive", "On campus"])
    assert compared(other, live).payload == {"eligible_deliveries": ["Intensive", "On campus", "Online"]}


def test_a_list_that_is_not_set_like_keeps_its_order() -> None:
    live = {"id": "s-1", "code": "SCI", "aliases": ["b", "a"]}
    out = compared(record("school", code="SCI", aliases=["a", "b"]), live)
    assert out.payload == {"aliases": ["a", "b"]}


_list_items = st.sampled_from(["", "a", "A", "b", "2026-02-01", "2026-02-01T00:00:00Z", " a"])
_lists = st.lists(_list_items, max_size=4)


@given(_lists, _lists)
def test_set_like_lists_of_texts_compare_as_their_normalised_sets(desired: list[str], live: list[str]) -> None:
    entity = PROFILE.entity("applicant")
    assert same_as_live(desired, live, "eligible_deliveries", entity) == same(desired, live, as_set=True)


_plain_values = st.none() | st.booleans() | st.integers(-2, 2) | st.floats(-2, 2, allow_nan=False) | _list_items
_references = st.builds(lambda v: {"id": v}, _list_items)


@given(_plain_values | _references | st.lists(_plain_values, max_size=3),
       _plain_values | _references | st.lists(_plain_values, max_size=3), st.sampled_from(["name", "tags"]))
def test_same_as_live_is_same_of_the_unshaped_values(value: Any, live: Any, name: str) -> None:
    entity = PROFILE.entity("credential")  # tags: set-like
    assert same_as_live(value, live, name, entity) == same(unshape(value), unshape(live), as_set=name == "tags")


def test_an_id_not_known_yet_is_never_the_live_value() -> None:
    entity = PROFILE.entity("credential")
    assert not same_as_live({"id": PendingId("credentials/x")}, {"id": "credentials/x"}, "parent", entity)
    assert not same_as_live([PendingId("tags/t")], ["tags/t"], "tags", entity)


def test_a_set_like_list_is_sent_sorted_with_ids_not_known_yet_last() -> None:
    entity = PROFILE.entity("credential")
    assert send_form(["t-2", PendingId("tags/new"), "t-1"], "tags", entity) == ["t-1", "t-2", PendingId("tags/new")]
    assert send_form(("b", "a"), "name", entity) == ["b", "a"]


# ---- read-only, create-only, immutable, forbidden, only_when -------------------------------


def test_a_read_only_field_is_never_sent() -> None:
    new = compared(record("subject", code="M1", type="SUBJECT", name="Maths"), None)
    assert "type" not in new.payload and new.findings == ()
    changed = compared(record("subject", code="M1", type="PROGRAM"), {"id": "u-1", "code": "M1", "type": "SUBJECT"})
    assert changed.payload == {}
    assert findings(changed) == [("warning", "read-only-field", "intake.xlsx › subject › B5")]


def test_a_create_only_field_is_sent_on_create_and_only_warned_about_after() -> None:
    assert compared(record("subject", code="M1", access="Open"), None).payload == {"code": "M1", "access": "Open"}
    out = compared(record("subject", code="M1", access="Open"), {"id": "u-1", "code": "M1", "access": "Restricted"})
    assert out.payload == {} and out.changes == []
    (finding,) = out.findings
    assert finding.code == "read-only-field" and "live 'Restricted', source 'Open'" in finding.message


def test_an_immutable_field_that_differs_is_an_error_and_hides_a_pii_value() -> None:
    live = {"id": "k-1", "applicant_id": "a-1", "type": "TERTIARY", "name": "Diploma"}
    rec = record("credential", pii=("type",), key_fields=("name",), name="Diploma", type="SUBJECT")
    out = compared(rec, live)
    (finding,) = out.findings
    assert (finding.severity, finding.code, str(finding.where)) == ("error", "immutable-field",
                                                                    "intake.xlsx › credential › B5")
    assert "SUBJECT" not in finding.message and "TERTIARY" not in finding.message
    assert out.payload == {}


def test_a_forbidden_field_is_an_error_and_not_sent() -> None:
    out = compared(record("arrangement", code="AR1", exemption="yes"), None)
    assert out.payload == {"code": "AR1"}
    assert findings(out) == [("error", "forbidden-field", "intake.xlsx › arrangement › B5")]


def test_a_field_allowed_only_when_another_has_a_value_is_an_error_otherwise() -> None:
    parent = Ref("credential", ("P",), ("name",))
    wrong = compared(record("credential", key_fields=("name",), name="C", type="TERTIARY", parent=parent), None)
    assert ("error", "field-not-allowed", "intake.xlsx › credential › C5") in findings(wrong)
    # the condition field's live value counts when the source does not set it
    live = {"id": "k-1", "name": "C", "type": "SUBJECT", "parent": None}
    right = compared(record("credential", key_fields=("name",), name="C", parent=parent), live,
                     {"credential": [live, {"id": "k-0", "name": "P"}]})
    assert right.findings == () and right.payload == {"parent": {"id": "k-0"}}


# ---- status paths --------------------------------------------------------------------------


def test_a_new_record_is_created_without_its_status_then_walks_the_legal_path() -> None:
    out = compared(record("arrangement", code="AR1", status="ACTIVE"), None)
    assert "status" not in out.payload
    assert out.status_path == ("READY", "ACTIVE") and changes(out)[-1] == ("status", None, "ACTIVE")
    assert not out.status_changed


def test_a_live_status_moves_one_update_a_step_and_an_equal_one_is_no_change() -> None:
    out = compared(record("arrangement", code="AR1", status="ACTIVE"), {"id": "r-1", "code": "AR1", "status": "READY"})
    assert out.status_path == ("ACTIVE",) and out.status_changed and out.payload == {}
    assert changes(out) == [("status", "READY", "ACTIVE")]
    same_status = compared(record("arrangement", code="AR1", status="READY"),
                           {"id": "r-1", "code": "AR1", "status": "READY"})
    assert same_status.status_path == () and not same_status.status_changed and same_status.changes == []


def test_an_unknown_status_or_one_with_no_legal_path_is_an_error_at_its_cell() -> None:
    unknown = compared(record("arrangement", code="AR1", status="DONE"), None)
    assert findings(unknown) == [("error", "unknown-status", "intake.xlsx › arrangement › B5")]
    illegal = compared(record("arrangement", code="AR1", status="DRAFT"),
                       {"id": "r-1", "code": "AR1", "status": "INACTIVE"})
    (finding,) = illegal.findings
    assert finding.code == "illegal-status-change"
    assert "from INACTIVE to DRAFT" in finding.message and "INACTIVE can move to: none" in finding.message
    assert illegal.status_path == ()


# ---- references ----------------------------------------------------------------------------


def test_a_reference_to_a_live_record_is_sent_in_the_profile_shape() -> None:
    school = {"id": "s-1", "code": "SCI"}
    out = compared(record("course", code="C1", parent=Ref("school", ("SCI",))), None, {"school": [school]})
    assert out.payload == {"code": "C1", "parent": {"id": "s-1"}}
    assert changes(out)[-1] == ("parent", None, "SCI")  # shown by the values it names
    assert out.depends_on == () and out.refers_to == ()


def test_a_changed_reference_shows_the_live_records_code_as_its_old_value() -> None:
    live = {"id": "c-1", "code": "C1", "parent": {"id": "s-1"}}
    schools = [{"id": "s-1", "code": "ART"}, {"id": "s-2", "code": "SCI"}]
    out = compared(record("course", code="C1", parent=Ref("school", ("SCI",))), live, {"school": schools})
    assert out.payload == {"parent": {"id": "s-2"}}
    assert changes(out) == [("parent", "ART", "SCI")]


def test_a_reference_to_a_record_this_plan_creates_is_pending_and_a_dependency() -> None:
    school = record("school", code="SCI", name="Science")
    entry = Entry("schools/SCI", school, ("code",), ("SCI",))
    out = compared(record("course", code="C1", parent=Ref("school", ("SCI",))), None, {}, [entry])
    assert out.payload["parent"] == {"id": PendingId("schools/SCI")}
    assert out.depends_on == ("schools/SCI",)
    assert set(out.depends_at) == {"schools/SCI"}


def test_a_reference_to_a_live_record_of_this_plan_is_noted_for_stale_checks() -> None:
    school = record("school", code="SCI", name="Science")
    entry = Entry("schools/SCI", school, ("code",), ("SCI",))
    out = compared(record("course", code="C1", parent=Ref("school", ("SCI",))), None,
                   {"school": [{"id": "s-1", "code": "SCI"}]}, [entry])
    assert out.payload["parent"] == {"id": "s-1"}
    assert out.refers_to == ("schools/SCI",) and out.depends_on == ()


def test_a_list_reference_resolves_each_item_and_compares_as_a_set() -> None:
    tags = [{"id": "t-1", "name": "x"}, {"id": "t-2", "name": "y"}]
    live = {"id": "k-1", "name": "C", "tags": ["t-2", "t-1"]}
    refs = (Ref("tag", ("x",), ("name",)), Ref("tag", ("y",), ("name",)))
    assert compared(record("credential", key_fields=("name",), name="C", tags=refs), live, {"tag": tags}).payload == {}


def test_a_reference_to_an_entity_the_field_does_not_take_is_an_error_at_its_own_cell() -> None:
    cell = CellRef("intake.xlsx", "course", "H5", 5)
    out = compared(record("course", code="C1", parent=Ref("subject", ("M1",), cell=cell)), None)
    assert findings(out) == [("error", "wrong-reference", "intake.xlsx › course › H5")]
    assert "parent" not in out.payload


def test_an_unresolved_reference_is_an_error_suggesting_a_near_key() -> None:
    out = compared(record("course", code="C1", parent=Ref("school", ("sci",))), None,
                   {"school": [{"id": "s-1", "code": "SCI"}]})
    (finding,) = out.findings
    assert finding.code == "unresolved-reference" and str(finding.where) == "intake.xlsx › course › B5"
    assert "did you mean 'SCI'?" in finding.message


def test_the_changes_of_records_to_create_and_their_labels_payload() -> None:
    rules = FieldRules(PROFILE.entity("subject"))
    resolver = Resolver([], {})
    records = [record("subject", code=f"S{n}", name=f"Subject {n}", custom_attributes={"Level": str(n % 2)})
               for n in range(10)]
    made = [plan_fields(rec, None, rules, resolver) for rec in records]
    assert changes(made[7]) == [("code", None, "S7"), ("name", None, "Subject 7"), (f"{CUSTOM}.Level", None, "1")]
    # every label has a value: the payload sends the desired labels' own object
    assert made[7].payload[CUSTOM] is records[7].fields[CUSTOM]
    half = plan_fields(record("subject", code="S", custom_attributes={"Level": "1", "Band": ""}), None, rules, resolver)
    assert half.payload[CUSTOM] == {"Level": "1"}  # an empty label left out: a dict of its own
