"""The executor against a real sandbox (uvicorn on loopback), with plans built by hand."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from helpers.apply import PROFILE, client_for, duplicates, make_plan, record, school_course_plan

from loader.apply.executor import ApplyOptions, apply_plan
from loader.apply.payloads import missing_changes
from loader.apply.results import Outcome, Results
from loader.findings import Finding
from loader.places import CellRef
from loader.plan.model import Action, PendingId
from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_thread


@pytest.fixture
def sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions()) as running:
        yield running


def _apply(sandbox: Any, plan: Any, options: ApplyOptions | None = None, **kw: Any) -> Results:
    async def go() -> Results:
        async with client_for(sandbox, concurrency=(options or ApplyOptions()).concurrency) as client:
            return await apply_plan(plan, client, PROFILE, options, **kw)

    return asyncio.run(go())


def _one(entity: str, code: str, name: str) -> Any:
    block = entity + "s"
    return make_plan((block, entity, [record(block, entity, code, {"code": code, "name": name})]))


def _live(sandbox: Any, *entities: str) -> dict[str, list[dict[str, Any]]]:
    async def go() -> dict[str, list[dict[str, Any]]]:
        async with client_for(sandbox) as client:
            return await client.fetch_collections(list(entities))

    return asyncio.run(go())


def test_created_parents_ids_flow_into_their_childrens_payloads(sandbox: Any) -> None:
    results = _apply(sandbox, school_course_plan(3, 4))
    assert results.ok and results.counts()[Outcome.CREATED] == 15
    live = _live(sandbox, "school", "course")
    school_ids = {s["code"]: s["id"] for s in live["school"]}
    for course in live["course"]:
        school = "S" + course["code"][1:].split("-")[0]
        assert course["parent"] == {"id": school_ids[school]}
    by_ref = results.by_ref()
    assert by_ref["courses/C0-0"].id == next(c["id"] for c in live["course"] if c["code"] == "C0-0")
    assert by_ref["courses/C0-0"].fields == ("code", "name", "parent")


def test_a_failed_create_skips_its_dependants_and_the_rest_applies(sandbox: Any) -> None:
    plan = school_course_plan(2, 2)
    broken = replace(plan.blocks[0].records[0], payload={"code": "S0"})
    plan = make_plan(
        ("schools", "school", (broken, plan.blocks[0].records[1])),
        ("courses", "course", plan.blocks[1].records),
    )
    results = _apply(sandbox, plan)
    by_ref = results.by_ref()
    assert by_ref["schools/S0"].outcome is Outcome.FAILED
    assert by_ref["schools/S0"].status == 400
    assert "name" in (by_ref["schools/S0"].message or "")
    assert by_ref["courses/C0-0"].outcome is Outcome.SKIPPED
    assert "schools/S0" in (by_ref["courses/C0-0"].message or "")
    assert by_ref["courses/C1-1"].outcome is Outcome.CREATED
    assert not results.ok
    assert sorted(c["code"] for c in _live(sandbox, "course")["course"]) == ["C1-0", "C1-1"]


def test_an_arrangement_walks_its_status_path_after_its_create(sandbox: Any) -> None:
    subject = record("subjects", "subject", "MATH1", {"code": "MATH1", "name": "Maths"})
    arrangement = record(
        "arrangements", "arrangement", "ART1",
        {"code": "ART1", "name": "Pathway", "subjects_awarded": [PendingId("subjects/MATH1")]},
        status_path=("READY", "ACTIVE"), depends_on=("subjects/MATH1",),
    )
    plan = make_plan(("subjects", "subject", [subject]), ("arrangements", "arrangement", [arrangement]))
    results = _apply(sandbox, plan)
    result = results.by_ref()["arrangements/ART1"]
    assert result.outcome is Outcome.CREATED and result.attempts == 3 and result.record_status == "ACTIVE"
    live = _live(sandbox, "arrangement", "subject")
    assert live["arrangement"][0]["status"] == "ACTIVE"
    assert live["arrangement"][0]["subjects_awarded"] == [live["subject"][0]["id"]]


def test_a_failed_status_step_reports_the_created_id_and_dependants_still_proceed(sandbox: Any) -> None:
    arrangement = record("arrangements", "arrangement", "BAD", {"code": "BAD", "name": "Skips READY"},
                         status_path=("ACTIVE",))
    school = record("schools", "school", "S", {"code": "S", "name": "S",
                                               "custom_attributes": {"Pathway": PendingId("arrangements/BAD")}},
                    depends_on=("arrangements/BAD",))
    plan = make_plan(("arrangements", "arrangement", [arrangement]), ("schools", "school", [school]))
    results = _apply(sandbox, plan)
    failed = results.by_ref()["arrangements/BAD"]
    assert failed.outcome is Outcome.FAILED and failed.status == 400 and failed.attempts == 2
    assert (failed.message or "").startswith("setting status to ACTIVE: ValidationError")
    live = _live(sandbox, "arrangement", "school")
    assert failed.id == live["arrangement"][0]["id"] and live["arrangement"][0]["status"] == "DRAFT"
    assert live["school"][0]["custom_attributes"] == {"Pathway": failed.id}


def test_an_update_sends_only_its_payload_and_leaves_other_fields_alone(sandbox: Any) -> None:
    payload = {"code": "SCI", "name": "Science", "custom_attributes": {"A": "1", "B": "2"}}
    _apply(sandbox, make_plan(("schools", "school", [record("schools", "school", "SCI", payload)])))
    live = _live(sandbox, "school")["school"][0]
    update = record(
        "schools", "school", "SCI", {"custom_attributes": {"A": "1", "B": "3"}},
        action=Action.UPDATE, live_id=live["id"], live_updated_time=live["metadata"]["updated"]["time"],
    )
    results = _apply(sandbox, make_plan(("schools", "school", [update])))
    assert results.by_ref()["schools/SCI"].outcome is Outcome.UPDATED
    after = _live(sandbox, "school")["school"][0]
    assert after["name"] == "Science" and after["custom_attributes"] == {"A": "1", "B": "3"}


def test_every_lost_create_answer_is_adopted_without_a_duplicate() -> None:
    with serve_in_thread(SandboxOptions(faults=FaultOptions(lost_rate=1.0, seed=3))) as sandbox:
        plan = make_plan(("schools", "school", [
            record("schools", "school", f"L{i}", {"code": f"L{i}", "name": f"Lost {i}"}) for i in range(20)
        ]))
        results = _apply(sandbox, plan)
        assert all(r.outcome is Outcome.CREATED and r.adopted for r in results.records)
        sandbox.set_faults(FaultOptions())
        live = _live(sandbox, "school")["school"]
        assert sorted(s["code"] for s in live) == sorted(f"L{i}" for i in range(20))
        assert duplicates(live) == []
        assert {r.id for r in results.records} == {s["id"] for s in live}


def test_a_lost_create_is_looked_up_under_the_blocks_key_not_the_profiles() -> None:
    # The mapping keys applicants by e-mail (the profile's default key is external_id), and the
    # credentials by applicant and type only: the look-up must ask for exactly those fields.
    with serve_in_thread(SandboxOptions(faults=FaultOptions(lost_rate=1.0, seed=5))) as sandbox:
        applicants = [
            record("applicants", "applicant", f"a{i}@uni.edu.au",
                   {"external_id": f"X{i}", "email_address": f"a{i}@uni.edu.au"})
            for i in range(3)
        ]
        credentials = [
            replace(
                record("credentials", "credential", f"a{i}/TERTIARY",
                       {"applicant_id": PendingId(f"applicants/a{i}@uni.edu.au"), "type": "TERTIARY"}),
                depends_on=(f"applicants/a{i}@uni.edu.au",),
            )
            for i in range(3)
        ]
        plan = make_plan(("applicants", "applicant", applicants), ("credentials", "credential", credentials))
        plan = replace(plan, blocks=(
            replace(plan.blocks[0], key_fields=("email_address",)),
            replace(plan.blocks[1], key_fields=("applicant_id", "type")),
        ))
        results = _apply(sandbox, plan)
        assert all(r.outcome is Outcome.CREATED and r.adopted for r in results.records), [
            (r.ref, r.outcome, r.message) for r in results.records
        ]
        sandbox.set_faults(FaultOptions())
        live = _live(sandbox, "applicant", "credential")
        assert len(live["applicant"]) == 3 and len(live["credential"]) == 3
        assert sorted((c["applicant_id"], c["type"]) for c in live["credential"]) == sorted(
            (a["id"], "TERTIARY") for a in live["applicant"]
        )


def test_a_lost_answer_for_a_keyless_create_fails_rather_than_risk_a_duplicate() -> None:
    with serve_in_thread(SandboxOptions(faults=FaultOptions(lost_rate=1.0))) as sandbox:
        applicant = record("applicants", "applicant", "A1", {"external_id": "A1", "first_name": "Ada"})
        application = record(
            "applications", "application", "x", {"applicant_id": PendingId("applicants/A1")},
            depends_on=("applicants/A1",),
        )
        application = replace(application, key=())
        plan = make_plan(("applicants", "applicant", [applicant]), ("applications", "application", [application]))
        results = _apply(sandbox, plan).by_ref()
        assert results["applicants/A1"].outcome is Outcome.CREATED and results["applicants/A1"].adopted
        result = results["applications/x"]
        assert result.outcome is Outcome.FAILED and "no key" in (result.message or "")
        assert result.attempts == 1


def test_a_lost_credential_create_is_found_by_its_whole_key_even_with_an_empty_part() -> None:
    with serve_in_thread(SandboxOptions(faults=FaultOptions(lost_rate=1.0))) as sandbox:
        applicant = record("applicants", "applicant", "A1", {"external_id": "A1"})
        credentials = [
            replace(
                record("credentials", "credential", f"A1/{kind}", {"applicant_id": PendingId("applicants/A1"),
                                                                   "type": kind, **extra}),
                key=("A1", kind, extra.get("name")), depends_on=("applicants/A1",),
            )
            for kind, extra in (("EMPLOYMENT", {}), ("TERTIARY", {"name": "BSc"}), ("SUBJECT", {"name": "BSc"}))
        ]
        plan = make_plan(("applicants", "applicant", [applicant]), ("credentials", "credential", credentials))
        results = _apply(sandbox, plan)
        assert [(r.outcome, r.adopted) for r in results.records] == [(Outcome.CREATED, True)] * 4
        sandbox.set_faults(FaultOptions())
        live = _live(sandbox, "credential")["credential"]
        assert sorted(c["type"] for c in live) == ["EMPLOYMENT", "SUBJECT", "TERTIARY"]
        assert {r.id for r in results.records[1:]} == {c["id"] for c in live}


def test_an_entity_the_profile_cannot_create_fails_that_record_only(sandbox: Any) -> None:
    tag = record("tags", "tag", "International", {"name": "International"})
    school = record("schools", "school", "OK", {"code": "OK", "name": "Fine"})
    results = _apply(sandbox, make_plan(("tags", "tag", [tag]), ("schools", "school", [school]))).by_ref()
    assert results["tags/International"].outcome is Outcome.FAILED
    assert "cannot be created" in (results["tags/International"].message or "")
    assert results["schools/OK"].outcome is Outcome.CREATED


def test_a_create_meeting_an_equal_record_under_its_key_adopts_it_without_a_write(sandbox: Any) -> None:
    _apply(sandbox, _one("school", "ENG", "Engineering"))
    results = _apply(sandbox, _one("school", "ENG", "Engineering"))
    result = results.records[0]
    assert result.outcome is Outcome.CREATED and result.adopted and result.attempts == 1
    live = _live(sandbox, "school")["school"]
    assert [(s["code"], s["name"]) for s in live] == [("ENG", "Engineering")]


def test_a_create_meeting_a_different_record_made_since_the_plan_fails_and_changes_nothing(sandbox: Any) -> None:
    _apply(sandbox, _one("school", "ENG", "Old"))
    results = _apply(sandbox, _one("school", "ENG", "Engineering"))
    result = results.records[0]
    assert result.outcome is Outcome.FAILED and result.status == 409 and result.id is None
    assert "created since the plan" in (result.message or "")
    live = _live(sandbox, "school")["school"]
    assert [(s["code"], s["name"]) for s in live] == [("ENG", "Old")]


def test_a_conflict_with_another_curriculum_type_fails_with_the_service_message(sandbox: Any) -> None:
    _apply(sandbox, _one("school", "DUP", "S"))
    results = _apply(sandbox, _one("course", "DUP", "C"))
    result = results.records[0]
    assert result.outcome is Outcome.FAILED and result.status == 409
    assert "'DUP'" in (result.message or "") and "SCHOOL" in (result.message or "")
    live = _live(sandbox, "school", "course")
    assert [(s["code"], s["name"]) for s in live["school"]] == [("DUP", "S")] and live["course"] == []


def test_blocked_records_and_stale_ones_are_skipped_with_their_dependants(sandbox: Any) -> None:
    plan = school_course_plan(3, 1)
    schools = list(plan.blocks[0].records)
    finding = Finding("error", "bad", "name too long", CellRef("curriculum.xlsx", "schools", "B2", 2))
    schools[0] = replace(schools[0], blocked=True, findings=(finding,))
    plan = make_plan(("schools", "school", schools), ("courses", "course", plan.blocks[1].records))
    results = _apply(sandbox, plan, ApplyOptions(partial=True, skip={"schools/S1": "stale: changed"}))
    outcome = {r.ref: (r.outcome, r.message) for r in results.records}
    assert outcome["schools/S0"] == (Outcome.SKIPPED, "not applied: name too long at curriculum.xlsx › schools › B2")
    assert outcome["schools/S1"] == (Outcome.SKIPPED, "stale: changed")
    assert outcome["courses/C0-0"][0] is Outcome.SKIPPED and outcome["courses/C1-0"][0] is Outcome.SKIPPED
    assert outcome["courses/C2-0"][0] is Outcome.CREATED
    assert [s["code"] for s in _live(sandbox, "school")["school"]] == ["S2"]


def test_unchanged_records_send_nothing(sandbox: Any) -> None:
    sandbox.reset_stats()
    plan = make_plan(("schools", "school", [
        record("schools", "school", "U", {}, action=Action.UNCHANGED, live_id="some-id"),
    ]))
    results = _apply(sandbox, plan)
    assert results.records[0].outcome is Outcome.UNCHANGED and results.ok
    assert results.request_counts.get("POST", 0) == 0 and results.request_counts.get("PATCH", 0) == 0


def test_stop_lets_in_flight_requests_finish_and_reports_the_rest_skipped() -> None:
    with serve_in_thread(SandboxOptions(faults=FaultOptions(latency_ms=50))) as sandbox:
        stop = asyncio.Event()
        seen: list[str] = []

        def listener(result: Any) -> None:
            seen.append(result.ref)
            if len(seen) == 3:
                stop.set()

        results = _apply(sandbox, school_course_plan(10, 0), ApplyOptions(concurrency=2), stop=stop, listener=listener)
        assert results.interrupted
        created = [r for r in results.records if r.outcome is Outcome.CREATED]
        skipped = [r for r in results.records if r.outcome is Outcome.SKIPPED]
        assert 3 <= len(created) <= 4 and len(created) + len(skipped) == 10
        assert all("interrupted" in (r.message or "") for r in skipped)
        assert len(_live(sandbox, "school")["school"]) == len(created)


def test_no_more_requests_are_in_flight_than_the_concurrency_allows() -> None:
    with serve_in_thread(SandboxOptions(faults=FaultOptions(latency_ms=30))) as sandbox:
        in_flight = 0
        peak = 0
        from loader.api.client import ApiClient

        class Counting(ApiClient):
            async def create(self, entity: str, payload: Any) -> Any:
                nonlocal in_flight, peak
                in_flight += 1
                peak = max(peak, in_flight)
                try:
                    return await super().create(entity, payload)
                finally:
                    in_flight -= 1

        async def go() -> Results:
            from helpers.apply import FAST_RETRY, environment_for

            async with Counting(environment_for(sandbox), PROFILE, concurrency=16, retry=FAST_RETRY) as client:
                return await apply_plan(school_course_plan(40, 0), client, PROFILE, ApplyOptions(concurrency=4))

        results = asyncio.run(go())
        assert results.ok and peak == 4


def test_a_record_of_an_entity_the_profile_does_not_know_fails_alone(sandbox: Any) -> None:
    plan = make_plan(
        ("faculties", "faculty", [record("faculties", "faculty", "F", {"code": "F", "name": "Faculty"})]),
        ("schools", "school", [record("schools", "school", "S", {"code": "S", "name": "School"})]),
    )
    results = _apply(sandbox, plan).by_ref()
    assert results["faculties/F"].outcome is Outcome.FAILED
    assert "unknown entity 'faculty'" in (results["faculties/F"].message or "")
    assert results["schools/S"].outcome is Outcome.CREATED


def test_an_adopted_record_is_patched_as_a_plan_would_be_labels_compared_like_the_planner() -> None:
    live = {"id": "s-1", "code": "S", "name": "School", "access": "Open",
            "custom_attributes": {"Keep": "k", "Gone": "x", "Level": "1"}}
    school = PROFILE.entity("subject")
    assert missing_changes(live, {"code": "S", "name": "School", "custom_attributes": {"Level": 1}}, school) == {}
    assert missing_changes(live, {"name": "School", "access": "Restricted"}, school) == {}  # create-only
    patch = missing_changes(live, {"name": "New", "custom_attributes": {"Gone": None, "Level": "2"}}, school)
    assert patch == {"name": "New", "custom_attributes": {"Keep": "k", "Level": "2"}}


def test_a_stale_record_is_skipped_with_the_records_referring_to_it_by_live_id(sandbox: Any) -> None:
    _apply(sandbox, _one("school", "S", "School"))
    school = _live(sandbox, "school")["school"][0]
    update = record("schools", "school", "S", {"name": "Renamed"}, action=Action.UPDATE, live_id=school["id"])
    course = record("courses", "course", "C", {"code": "C", "name": "Course", "parent": {"id": school["id"]}},
                    refers_to=("schools/S",))
    other = record("courses", "course", "D", {"code": "D", "name": "Other"})
    plan = make_plan(("schools", "school", [update]), ("courses", "course", [course, other]))
    results = _apply(sandbox, plan, ApplyOptions(skip={"schools/S": "stale: changed in the service"})).by_ref()
    assert results["schools/S"].outcome is Outcome.SKIPPED
    assert results["courses/C"].outcome is Outcome.SKIPPED
    assert "refers to schools/S" in (results["courses/C"].message or "")
    assert results["courses/D"].outcome is Outcome.CREATED
    assert [c["code"] for c in _live(sandbox, "course")["course"]] == ["D"]


def test_a_lost_create_of_a_record_without_a_unique_field_is_never_sent_twice() -> None:
    # 500/503 answers come before any commit here, but the executor cannot know that: a credential
    # (nothing the service keeps unique) whose create is not found afterwards fails instead of being
    # re-sent, because on a slow service the first create could still land and make a duplicate.
    with serve_in_thread(SandboxOptions()) as sandbox:
        _apply(sandbox, make_plan(("applicants", "applicant", [
            record("applicants", "applicant", "A1", {"external_id": "A1"})
        ])))
        applicant_id = _live(sandbox, "applicant")["applicant"][0]["id"]
        sandbox.set_faults(FaultOptions(error_rate=0.5, seed=11))
        credentials = [
            record("credentials", "credential", f"A1/{i}",
                   {"applicant_id": applicant_id, "type": "EMPLOYMENT", "name": f"Job {i}"})
            for i in range(12)
        ]
        results = _apply(sandbox, make_plan(("credentials", "credential", credentials)))
        sandbox.set_faults(FaultOptions())
        failed = [r for r in results.records if r.outcome is Outcome.FAILED]
        assert failed, "with half the answers failing, some creates must have met an unknown outcome"
        assert all(r.attempts == 1 and "not sent again" in (r.message or "") for r in failed)
        created = sorted(r.key[0] for r in results.records if r.outcome is Outcome.CREATED)
        live = _live(sandbox, "credential")["credential"]
        assert sorted(f"A1/{c['name'][4:]}" for c in live) == created  # none made twice, none unrecorded
