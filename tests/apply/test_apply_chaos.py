"""Chaos: 5,000 records applied while the sandbox fails requests, loses answers after commit,
rate-limits with Retry-After, and expires tokens (5 s) and page tokens (2 s). The end state,
read back through the API, must equal the source: no duplicates, no other field changed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers.apply import FAST_RETRY, PROFILE, client_for, duplicates, make_plan, record

from loader.apply.executor import ApplyOptions, apply_plan
from loader.apply.results import Outcome, Results
from loader.plan.model import Action, PendingId, Plan
from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_thread

SCHOOLS = 50
EXISTING_COURSES = 1000
NEW_PROGRAMS = 950
NEW_SUBJECTS = 3000  # 50 + 1000 + 950 + 3000 = 5,000 records


def _seed() -> dict[str, Any]:
    schools = [
        {"id": f"00000000-0000-4000-8000-{i:012d}", "code": f"S{i}", "name": f"School {i}",
         "custom_attributes": {"Keep": f"k{i}"}}
        for i in range(SCHOOLS)
    ]
    courses = [
        {"id": f"00000000-0000-4000-9000-{i:012d}", "code": f"E{i}", "name": f"Old {i}", "description": f"keep {i}",
         "parent": {"id": schools[i % SCHOOLS]["id"]}}
        for i in range(EXISTING_COURSES)
    ]
    return {"institution-a": {"schools": schools, "courses": courses}}


def _plan(seed: dict[str, Any]) -> Plan:
    schools = seed["institution-a"]["schools"]
    courses = seed["institution-a"]["courses"]
    school_records = [
        record("schools", "school", s["code"], {"name": f"Renamed {i}"} if i % 2 else {},
               action=Action.UPDATE if i % 2 else Action.UNCHANGED, live_id=s["id"], row=i + 2)
        for i, s in enumerate(schools)
    ]
    course_records = [
        record("courses", "course", c["code"], {"name": f"New {i}"}, action=Action.UPDATE, live_id=c["id"], row=i + 2)
        for i, c in enumerate(courses)
    ]
    program_records = [
        record("programs", "program", f"P{i}",
               {"code": f"P{i}", "name": f"Program {i}", "parent": {"id": courses[i]["id"]}}, row=i + 2)
        for i in range(NEW_PROGRAMS)
    ]
    subject_records = [
        record("subjects", "subject", f"U{i}",
               {"code": f"U{i}", "name": f"Subject {i}", "parent": {"id": PendingId(f"programs/P{i % NEW_PROGRAMS}")}},
               depends_on=(f"programs/P{i % NEW_PROGRAMS}",), row=i + 2)
        for i in range(NEW_SUBJECTS)
    ]
    return make_plan(
        ("schools", "school", school_records),
        ("courses", "course", course_records),
        ("programs", "program", program_records),
        ("subjects", "subject", subject_records),
    )


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_five_thousand_records_under_faults_end_exactly_as_the_source() -> None:
    seed = _seed()
    # A tight rate limit first, so 429s with Retry-After are met whatever the machine's speed; then
    # one the run can live with (still met when the machine is fast).
    faults = FaultOptions(error_rate=0.10, lost_rate=0.05, rate_limit=20, seed=7)
    options = SandboxOptions(seed=seed, token_ttl=5.0, page_token_ttl=2.0, faults=faults)
    with serve_in_thread(options) as sandbox:
        done: list[str] = []

        def loosen_after_a_while(result: Any) -> None:
            done.append(result.ref)
            if len(done) == 60:
                sandbox.set_faults(FaultOptions(error_rate=0.10, lost_rate=0.05, rate_limit=400, seed=8))

        async def go() -> tuple[Results, dict[str, Any], dict[str, list[dict[str, Any]]]]:
            async with client_for(sandbox, concurrency=16, retry=FAST_RETRY) as client:
                plan = _plan(seed)
                options = ApplyOptions(concurrency=16)
                results = await apply_plan(plan, client, PROFILE, options, listener=loosen_after_a_while)
                stats = sandbox.stats()
                sandbox.set_faults(FaultOptions())
                live = await client.fetch_collections(["school", "course", "program", "subject"])
                return results, stats, live

        results, stats, live = asyncio.run(go())

    assert [r for r in results.records if r.outcome in (Outcome.FAILED, Outcome.SKIPPED)] == []
    counts = results.counts()
    assert counts[Outcome.CREATED] == NEW_PROGRAMS + NEW_SUBJECTS
    assert counts[Outcome.UPDATED] == SCHOOLS // 2 + EXISTING_COURSES
    assert any(r.adopted for r in results.records), "the lost answers must have been met and adopted"

    schools = {s["code"]: s for s in live["school"]}
    assert len(live["school"]) == SCHOOLS
    for i in range(SCHOOLS):
        school = schools[f"S{i}"]
        assert school["name"] == (f"Renamed {i}" if i % 2 else f"School {i}")
        assert school["custom_attributes"] == {"Keep": f"k{i}"}
    courses = {c["code"]: c for c in live["course"]}
    assert len(live["course"]) == EXISTING_COURSES
    for i in range(EXISTING_COURSES):
        course = courses[f"E{i}"]
        assert (course["name"], course["description"]) == (f"New {i}", f"keep {i}")
        assert course["parent"] == {"id": f"00000000-0000-4000-8000-{i % SCHOOLS:012d}"}
    for collection in ("program", "subject"):
        assert duplicates(live[collection]) == []
    programs = {p["code"]: p for p in live["program"]}
    assert sorted(programs) == sorted(f"P{i}" for i in range(NEW_PROGRAMS))
    for i in range(NEW_PROGRAMS):
        assert programs[f"P{i}"]["parent"] == {"id": f"00000000-0000-4000-9000-{i:012d}"}
    subjects = {s["code"]: s for s in live["subject"]}
    assert sorted(subjects) == sorted(f"U{i}" for i in range(NEW_SUBJECTS))
    for i in range(NEW_SUBJECTS):
        assert subjects[f"U{i}"]["parent"] == {"id": programs[f"P{i % NEW_PROGRAMS}"]["id"]}
        assert subjects[f"U{i}"]["name"] == f"Subject {i}"
    assert results.request_counts["token"] >= 2, f"tokens must have been renewed: {results.request_counts}"
    faults_met = stats["faults"]
    assert min(faults_met.get(k, 0) for k in ("rate_limited", "error_500", "error_503", "lost")) > 0, faults_met
