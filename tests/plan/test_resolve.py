"""Key matching and reference resolution (loader.plan.resolve): exact matches, folded ones only to warn."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from loader.places import CellRef
from loader.plan.compare import fold
from loader.plan.model import PendingId
from loader.plan.resolve import (
    Entry,
    Resolution,
    Resolver,
    exact_key,
    fold_key,
    key_text,
    live_key,
    show_key,
)
from loader.plan.unique_claims import UniqueClaims, unique_clashes
from loader.source.records import DesiredRecord, Ref

GROUP = ("code", ("school", "course", "program", "subject"))


def entry(block: str, entity: str, key: tuple[Any, ...], key_fields: tuple[str, ...] = ("code",), row: int = 2,
          **fields: Any) -> Entry:
    """A desired record's entry, as the merge makes it: ref "<block>/<key>", its key fields among its fields."""
    fields = {**dict(zip(key_fields, key, strict=True)), **fields}
    rec = DesiredRecord(block, entity, key, fields, CellRef("intake.xlsx", block, None, row))
    return Entry(f"{block}/{show_key(key)}", rec, key_fields, exact_key(key))


def resolver(entries: Sequence[Entry] = (), **live: Sequence[Mapping[str, Any]]) -> Resolver:
    return Resolver(list(entries), live)


def describe(rec: Mapping[str, Any]) -> str:
    return f"{rec.get('type')} {rec.get('id')}"


# ---- keys ----------------------------------------------------------------------------------


def test_a_key_part_is_matched_by_its_text_an_objects_id_or_a_pending_id_as_it_is() -> None:
    assert key_text("SCI") == "SCI"
    assert key_text({"id": "s-1", "code": "SCI"}) == "s-1"
    assert key_text(PendingId("schools/SCI")) == PendingId("schools/SCI")
    assert key_text(None) is None
    assert key_text(101) == "101" and key_text(6.0) == "6"


def test_a_key_holding_a_reference_has_no_exact_form_until_it_is_resolved() -> None:
    assert exact_key(("SCI",)) == ("SCI",)
    assert exact_key((101, "x")) == ("101", "x")
    assert exact_key((Ref("applicant", ("A1",), ("external_id",)), "Diploma")) is None


def test_a_key_is_shown_joined_by_slashes_a_reference_by_its_values() -> None:
    assert show_key(("A1", "Diploma")) == "A1/Diploma"
    assert show_key((Ref("applicant", ("A1",), ("external_id",)), "Diploma")) == "A1/Diploma"


_key_parts = st.none() | st.integers(-3, 3) | st.text(alphabet="aA -:0123T", max_size=12) | st.builds(
    lambda v: {"id": v}, st.text(alphabet="ab", max_size=2))


@given(st.dictionaries(st.sampled_from(["code", "name", "type"]), _key_parts),
       st.sampled_from([("code",), ("name",), ("code", "type"), ("type", "name", "code")]))
def test_a_live_key_is_the_key_text_of_each_key_field(record: dict[str, Any], by: tuple[str, ...]) -> None:
    assert live_key(record, by) == tuple(key_text(record.get(f)) for f in by)


@given(st.lists(st.text(alphabet="aAbB -:0123456789TZ", max_size=22), min_size=1, max_size=3))
def test_a_key_of_texts_folds_as_fold_folds_each_text(parts: list[str]) -> None:
    assert fold_key(parts) == tuple(fold(p) for p in parts)


# ---- matching ------------------------------------------------------------------------------


def test_a_key_matches_the_first_live_record_with_exactly_that_key() -> None:
    first, repeat = {"id": "s-1", "code": "SCI"}, {"id": "s-2", "code": "SCI"}
    found = resolver(school=[{"id": "s-0", "code": "sci"}, first, repeat])
    assert found.match(entry("schools", "school", ("SCI",))) is first
    assert found.live_index("school", ("code",))["SCI"] is first


def test_a_key_differing_only_in_case_or_spaces_does_not_match_but_is_a_near_duplicate() -> None:
    live = {"id": "s-1", "code": "Sci Ence"}
    found = resolver(school=[live])
    near = entry("schools", "school", ("SCIENCE",))
    assert found.match(near) is None
    assert found.near_duplicate(near) is live
    assert found.near_duplicate(entry("schools", "school", ("ARTS",))) is None


def test_a_key_holding_a_reference_matches_once_its_reference_resolves() -> None:
    applicant = {"id": "a-1", "external_id": "A1"}
    credential = {"id": "k-1", "applicant_id": "a-1", "name": "Diploma"}
    key = (Ref("applicant", ("A1",), ("external_id",)), "Diploma")
    wanted = entry("credentials", "credential", key, ("applicant_id", "name"))
    assert wanted.exact_key is None
    found = resolver(applicant=[applicant], credential=[credential])
    assert found.key_parts(wanted) == ("a-1", "Diploma")
    assert found.match(wanted) is credential


def test_a_key_whose_reference_does_not_resolve_matches_nothing() -> None:
    key = (Ref("applicant", ("A9",), ("external_id",)), "Diploma")
    wanted = entry("credentials", "credential", key, ("applicant_id", "name"))
    found = resolver(credential=[{"id": "k-1", "applicant_id": "a-1", "name": "Diploma"}])
    assert found.key_parts(wanted) is None
    assert found.match(wanted) is None and found.near_duplicate(wanted) is None


def test_a_key_that_refers_to_its_own_record_cannot_match() -> None:
    key = (Ref("credential", ("A1/Diploma",), ("name",)), "Diploma")
    wanted = entry("credentials", "credential", key, ("parent", "name"))
    found = resolver([wanted], credential=[{"id": "k-1", "parent": "k-0", "name": "Diploma"}])
    assert found.match(wanted) is None


# ---- references ----------------------------------------------------------------------------


def test_a_reference_to_a_live_record_resolves_to_its_id() -> None:
    found = resolver(school=[{"id": "s-1", "code": "SCI"}])
    assert found.resolve(Ref("school", ("SCI",))) == Resolution("s-1")


def test_a_reference_to_a_record_this_plan_creates_resolves_to_its_pending_id() -> None:
    school = entry("schools", "school", ("SCI",))
    assert resolver([school]).resolve(Ref("school", ("SCI",))) == Resolution(
        PendingId("schools/SCI"), pending="schools/SCI", planned="schools/SCI")


def test_a_reference_to_a_record_of_this_plan_that_is_live_resolves_to_the_live_id_and_names_the_record() -> None:
    school = entry("schools", "school", ("SCI",))
    found = resolver([school], school=[{"id": "s-1", "code": "SCI"}])
    assert found.resolve(Ref("school", ("SCI",))) == Resolution("s-1", planned="schools/SCI")


def test_a_reference_by_another_field_resolves_through_that_field() -> None:
    tags = [{"id": "t-1", "name": "Priority"}]
    assert resolver(tag=tags).resolve(Ref("tag", ("Priority",), ("name",))).value == "t-1"
    desired = entry("tags", "tag", ("Priority",), ("name",))
    assert resolver([desired]).resolve(Ref("tag", ("Priority",), ("name",))).pending == "tags/Priority"


def test_an_unresolved_reference_says_what_was_looked_for_and_suggests_a_folded_match_first() -> None:
    found = resolver([entry("schools", "school", ("ARTS",))], school=[{"id": "s-1", "code": "Sci"}])
    resolution = found.resolve(Ref("school", ("SCI",)))
    assert resolution.value is None and resolution.pending is None
    assert resolution.problem == "no school with code 'SCI' in the source or live; did you mean 'Sci'?"


def test_an_unresolved_reference_suggests_a_close_key_or_nothing() -> None:
    found = resolver(school=[{"id": "s-1", "code": "SCIENCE"}])
    assert found.resolve(Ref("school", ("SCIENC",))).problem == (
        "no school with code 'SCIENC' in the source or live; did you mean 'SCIENCE'?")
    assert found.resolve(Ref("school", ("ZZZ",))).problem == "no school with code 'ZZZ' in the source or live"


def test_a_live_id_is_labelled_by_its_code_external_id_or_name_else_shown_as_it_is() -> None:
    found = resolver(school=[{"id": "s-1", "code": "SCI"}], applicant=[{"id": "a-1", "external_id": "A1"}],
                     tag=[{"id": "t-1", "name": "Priority"}])
    assert [found.live_label(i) for i in ("s-1", "a-1", "t-1")] == ["SCI", "A1", "Priority"]
    assert found.live_label("gone") == "gone"


# ---- unique groups (a curriculum code across types) ----------------------------------------


def test_a_code_used_live_by_another_member_entity_is_a_clash_naming_the_live_record() -> None:
    course = entry("courses", "course", ("X1",))
    found = resolver([course], school=[{"id": "s-1", "code": "X1", "type": "SCHOOL"}],
                     course=[{"id": "c-1", "code": "X1", "type": "COURSE"}])
    assert unique_clashes([course], found, GROUP, describe) == {
        "courses/X1": ["code 'X1' is already used live by SCHOOL s-1"]}


def test_a_code_claimed_by_two_desired_records_of_different_entities_is_a_clash_for_both() -> None:
    school, course = entry("schools", "school", ("X1",), row=2), entry("courses", "course", ("X1",), row=3)
    clashes = unique_clashes([school, course], resolver([school, course]), GROUP, describe)
    assert clashes == {
        "schools/X1": ["code 'X1' is also claimed by course courses/X1 (intake.xlsx › courses › row 3)"],
        "courses/X1": ["code 'X1' is also claimed by school schools/X1 (intake.xlsx › schools › row 2)"],
    }


def test_a_code_two_entities_claim_names_its_live_holder_to_the_other() -> None:
    school, course = entry("schools", "school", ("X1",), row=2), entry("courses", "course", ("X1",), row=3)
    found = resolver([school, course], school=[{"id": "s-1", "code": "X1", "type": "SCHOOL"}])
    clashes = unique_clashes([school, course], found, GROUP, describe)
    assert clashes["courses/X1"] == [
        "code 'X1' is already used live by SCHOOL s-1",
        "code 'X1' is also claimed by school schools/X1 (intake.xlsx › schools › row 2)",
    ]
    assert clashes["schools/X1"] == [
        "code 'X1' is also claimed by course courses/X1 (intake.xlsx › courses › row 3)"]


def test_a_code_of_one_entity_desired_and_live_is_no_clash() -> None:
    school = entry("schools", "school", ("X1",))
    assert unique_clashes([school], resolver([school], school=[{"id": "s-1", "code": "X1"}]), GROUP, describe) == {}


def test_a_value_can_clash_while_another_member_may_still_claim_it_and_never_once_all_are_in() -> None:
    subject, twin = entry("subjects", "subject", ("U1",)), entry("programs", "program", ("U2",))
    other = entry("subjects", "subject", ("U2",))
    claims = UniqueClaims([subject, twin, other], GROUP)
    everyone = frozenset(GROUP[1])
    assert claims.can_clash(subject, everyone - {"program"})  # programs still arriving: one may hold U1
    assert not claims.can_clash(subject, everyone)  # all in, none holds U1: it is the subject's for good
    assert claims.can_clash(other, everyone)  # U2 is claimed by a program too
    claims.add("school", [{"id": "s-1", "code": "U1", "type": "SCHOOL"}])
    assert claims.can_clash(subject, everyone)  # a live school holds U1
    # the claim passed on to the entry made again is the one the clashes name (a ref of its own here,
    # to tell the two apart)
    claims.replace(subject, subject._replace(ref="subjects/U1 again"))
    assert claims.clashes(describe) == {"subjects/U1 again": ["code 'U1' is already used live by SCHOOL s-1"],
                                        "programs/U2": ["code 'U2' is also claimed by subject subjects/U2 "
                                                        "(intake.xlsx › subjects › row 2)"],
                                        "subjects/U2": ["code 'U2' is also claimed by program programs/U2 "
                                                        "(intake.xlsx › programs › row 2)"]}


_codes = st.sampled_from(["A", "B", "C"])
_members = st.sampled_from(GROUP[1])


@given(st.lists(st.tuples(_members, _codes), max_size=4),
       st.lists(st.tuples(_members, _codes), max_size=6), st.integers(0, 6))
def test_claims_added_a_page_at_a_time_give_the_clashes_of_all_at_once(
    desired: list[tuple[str, str]], live: list[tuple[str, str]], cut: int
) -> None:
    claimed = dict.fromkeys(desired)  # one record per entity and code
    entries = [entry(f"{entity}s", entity, (code,), row=n + 2) for n, (entity, code) in enumerate(claimed)]
    collections: dict[str, list[dict[str, Any]]] = {entity: [] for entity in GROUP[1]}
    for n, (entity, code) in enumerate(live):
        collections[entity].append({"id": f"{entity}-{n}", "code": code, "type": entity.upper()})
    claims = UniqueClaims(entries, GROUP)
    for entity, records in collections.items():  # the first pages, then the rest caught up with
        claims.add(entity, records[:cut])
    for entity, records in collections.items():
        claims.catch_up(entity, records)
    assert claims.clashes(describe) == unique_clashes(entries, resolver(entries, **collections), GROUP, describe)
