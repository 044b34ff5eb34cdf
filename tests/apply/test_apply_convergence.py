"""Property: for generated source data and live states, apply(plan(x)) then plan(x) shows no changes.

Each example seeds a fresh sandbox with a live state, plans the desired records against it with
the pure planner, applies the plan through the real client, then plans again from what the
service now holds."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from helpers.apply import PROFILE, client_for
from helpers.plan import Block
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loader.apply.executor import apply_plan
from loader.apply.results import Outcome
from loader.places import CellRef
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.model import Plan
from loader.sandbox.server import SandboxOptions, serve_in_thread
from loader.source.records import DesiredRecord, Ref

SCHOOL_CODES = ("SCI", "ART", "ENG")
COURSE_CODES = ("BSC", "BA", "BENG", "MSC")
SUBJECT_CODES = ("MATH1", "PHYS1", "HIST1")
ARRANGEMENT_CODES = ("AR1", "AR2")
ENTITIES = ("school", "course", "subject", "arrangement")


def _desired(block: str, entity: str, row: int, **fields: Any) -> DesiredRecord:
    return DesiredRecord(block, entity, (fields["code"],), fields, CellRef("intake.xlsx", block, None, row))


_names = st.sampled_from(["Alpha", "Beta", "Gamma", "Delta"])
_attrs = st.dictionaries(st.sampled_from(["Faculty", "CRICOS"]), _names, max_size=2)


@st.composite
def _world(draw: st.DrawFn) -> tuple[list[Block], dict[str, Any]]:
    """Desired blocks, and a seed holding some of those records (with other values) and others."""
    schools = draw(st.lists(st.sampled_from(SCHOOL_CODES), min_size=1, max_size=3, unique=True))
    courses = draw(st.lists(st.sampled_from(COURSE_CODES), max_size=4, unique=True))
    subjects = draw(st.lists(st.sampled_from(SUBJECT_CODES), max_size=3, unique=True)) if courses else []
    arrangements = draw(st.lists(st.sampled_from(ARRANGEMENT_CODES), max_size=2, unique=True))

    school_recs = [_desired("schools", "school", i + 2, code=c, name=draw(_names), custom_attributes=draw(_attrs))
                   for i, c in enumerate(schools)]
    course_recs = [_desired("courses", "course", i + 2, code=c, name=draw(_names),
                            parent=Ref("school", (draw(st.sampled_from(schools)),)))
                   for i, c in enumerate(courses)]
    subject_recs = [_desired("subjects", "subject", i + 2, code=c, name=draw(_names),
                             parent=Ref("course", (draw(st.sampled_from(courses)),)))
                    for i, c in enumerate(subjects)]
    arrangement_recs = []
    for i, code in enumerate(arrangements):
        awarded = draw(st.lists(st.sampled_from(subjects), unique=True, max_size=2)) if subjects else []
        arrangement_recs.append(_desired(
            "arrangements", "arrangement", i + 2, code=code, name=draw(_names),
            status=draw(st.sampled_from(["DRAFT", "READY", "ACTIVE"])),
            subjects_awarded=tuple(Ref("subject", (s,)) for s in awarded),
        ))
    blocks = [
        Block("schools", "school", ("code",), tuple(school_recs)),
        Block("courses", "course", ("code",), tuple(course_recs)),
        Block("subjects", "subject", ("code",), tuple(subject_recs)),
        Block("arrangements", "arrangement", ("code",), tuple(arrangement_recs)),
    ]

    # Live: any school (desired or not) may exist, with other names and attributes; a course
    # may exist under any live school; arrangements may exist as DRAFT or READY.
    live_schools = [
        {"id": f"00000000-0000-4000-8000-{i:012d}", "code": c, "name": draw(_names), "custom_attributes": draw(_attrs)}
        for i, c in enumerate(SCHOOL_CODES) if draw(st.booleans())
    ]
    live_courses = []
    if live_schools:
        for i, c in enumerate(COURSE_CODES):
            if draw(st.booleans()):
                parent = draw(st.sampled_from(live_schools))["id"]
                live_courses.append({"id": f"00000000-0000-4000-9000-{i:012d}", "code": c, "name": draw(_names),
                                     "parent": {"id": parent}})
    live_arrangements = [
        {"code": c, "name": draw(_names), "status": draw(st.sampled_from(["DRAFT", "READY"]))}
        for c in ARRANGEMENT_CODES if draw(st.booleans())
    ]
    seed = {"institution-a": {"schools": live_schools, "courses": live_courses, "arrangements": live_arrangements}}
    return blocks, seed


def _plan(blocks: Sequence[Block], live: dict[str, list[dict[str, Any]]]) -> Plan:
    return plan_changes(blocks, live, PROFILE, header=PlanHeader("sandbox", None, "", env_name="sandbox"))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_world())
def test_applying_a_plan_then_planning_again_shows_no_changes(world: tuple[list[Block], dict[str, Any]]) -> None:
    blocks, seed = world
    with serve_in_thread(SandboxOptions(seed=seed)) as sandbox:

        async def go() -> tuple[Plan, Any, Plan]:
            async with client_for(sandbox) as client:
                first = _plan(blocks, await client.fetch_collections(ENTITIES))
                results = await apply_plan(first, client, PROFILE)
                second = _plan(blocks, await client.fetch_collections(ENTITIES))
                return first, results, second

        first, results, second = asyncio.run(go())
    assert not first.has_errors, [f.message for r in first.records() for f in r.errors]
    assert results.ok, [(r.ref, r.message) for r in results.records if r.outcome is not Outcome.UNCHANGED]
    changed = [(r.ref, r.action, r.payload, r.status_path) for r in second.records() if r.has_changes]
    assert changed == []
    assert {r.ref for r in second.records()} == {r.ref for r in first.records()}
