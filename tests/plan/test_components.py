"""Planning a plan's parts one by one (as `loader plan` does while pages arrive) gives the whole plan."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from helpers.plan import REPO, SAMPLE_MAPPINGS, SAMPLE_SEED, Block, environment_for, plan_against
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.api.client import ApiClient
from loader.places import CellRef
from loader.plan.components import joined_plan, plan_parts
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.digest import plan_digest
from loader.plan.model import Plan
from loader.profile import load_profile
from loader.sandbox.server import SandboxOptions, serve_in_thread
from loader.source.records import DesiredRecord, Ref

PROFILE = load_profile()
HEADER = PlanHeader("sandbox", findings=())
text = st.text(alphabet="ab ", min_size=0, max_size=2)


def _desired(block: str, entity: str, row: int, key: tuple[Any, ...], fields: dict[str, Any]) -> DesiredRecord:
    return DesiredRecord(block, entity, key, fields, CellRef("gen.xlsx", block, None, row))


@st.composite
def worlds(draw: st.DrawFn) -> tuple[list[Block], dict[str, list[dict[str, Any]]]]:
    """Schools and courses (one unique group, courses refer to schools), a second school block that
    merges with the first, applicants with credentials (keyed by a reference), arrangements; live
    records for some, with repeated keys now and then; blocks in any order, a block name repeated
    now and then."""
    live: dict[str, list[dict[str, Any]]] = {e: [] for e in ("school", "course", "applicant", "credential",
                                                             "subject", "arrangement")}
    blocks: list[Block] = []
    schools, more_schools, courses = [], [], []
    for n, code in enumerate(draw(st.lists(st.sampled_from(["S1", "S2", "s1", "C-S1"]), unique=True, max_size=3))):
        schools.append(_desired("schools", "school", n + 2, (code,), {"code": code, "name": draw(text)}))
        if draw(st.booleans()):
            more_schools.append(_desired("more-schools", "school", n + 2, (code,), {"code": code, "name": draw(text)}))
        if draw(st.booleans()):
            courses.append(_desired("courses", "course", n + 2, (f"C-{code}",),
                                    {"code": f"C-{code}", "name": "c", "parent": Ref("school", (code,))}))
        for copy in range(draw(st.integers(0, 2))):
            live["school"].append({"id": f"s-{n}-{copy}", "code": code, "name": draw(text), "type": "SCHOOL"})
    if draw(st.booleans()):
        live["course"].append({"id": "c-x", "code": "C-S1", "name": "c", "type": "COURSE", "parent": {"id": "s-0-0"}})
    applicants, credentials = [], []
    for n, ext in enumerate(draw(st.lists(st.sampled_from(["A1", "A2", "A3"]), unique=True, max_size=3))):
        applicants.append(_desired("applicants", "applicant", n + 2, (ext,),
                                   {"external_id": ext, "first_name": draw(text), "last_name": "x"}))
        if draw(st.booleans()):
            live["applicant"].append({"id": f"a-{n}", "external_id": ext, "first_name": draw(text), "last_name": "x"})
        if draw(st.booleans()):
            ref = Ref("applicant", (ext,), ("external_id",))
            credentials.append(_desired("credentials", "credential", n + 2, (ref, "TERTIARY", "Diploma"),
                                        {"applicant_id": ref, "type": "TERTIARY", "name": "Diploma",
                                         "result": draw(text)}))
    subjects = [_desired("subjects", "subject", row, (code,), {"code": code, "name": "u"})
                for row, code in enumerate(draw(st.lists(st.sampled_from(["U1", "U2"]), unique=True)), start=2)]
    live["subject"] = [{"id": f"u-{code}", "code": code, "name": draw(text), "type": "SUBJECT"}
                       for code in draw(st.lists(st.sampled_from(["U1", "U3"]), unique=True))]
    arrangements = []
    for row, code in enumerate(draw(st.lists(st.sampled_from(["R1", "R2"]), unique=True)), start=2):
        fields: dict[str, Any] = {"code": code, "name": "x"}
        if draw(st.booleans()):  # the only thing that joins arrangements to the curriculum
            awarded = draw(st.lists(st.sampled_from(["U1", "U2", "U3", "U4"]), unique=True, max_size=2))
            fields["subjects_awarded"] = [Ref("subject", (c,)) for c in awarded]
        arrangements.append(_desired("arrangements", "arrangement", row, (code,), fields))
    live["arrangement"] = [{"id": f"r-{code}", "code": code, "name": draw(text)}
                           for code in draw(st.lists(st.sampled_from(["R1", "R3"]), unique=True))]
    blocks = [Block("schools", "school", ("code",), tuple(schools)),
              Block("more-schools", "school", ("code",), tuple(more_schools)),
              Block("courses", "course", ("code",), tuple(courses)),
              Block("applicants", "applicant", ("external_id",), tuple(applicants)),
              Block("credentials", "credential", ("applicant_id", "type", "name"), tuple(credentials)),
              Block("subjects", "subject", ("code",), tuple(subjects)),
              Block("arrangements", "arrangement", ("code",), tuple(arrangements))]
    blocks = draw(st.permutations(blocks))
    if draw(st.integers(0, 4)) == 0:  # a repeated block name: planned as one part
        first, second = draw(st.lists(st.integers(0, len(blocks) - 1), min_size=2, max_size=2, unique=True))
        old = blocks[second]
        blocks[second] = Block(blocks[first].block, old.entity, old.key_fields, old.records)
    return blocks, live


def _by_parts(blocks: list[Block], live: dict[str, list[dict[str, Any]]]) -> Plan:
    """What loader.plan.run does: each part with only the collections it needs."""
    parts = plan_parts(blocks, PROFILE)
    plans = [plan_changes(part.blocks_of(blocks), {e: live.get(e, []) for e in part.entities}, PROFILE, header=HEADER)
             for part in parts]
    return joined_plan(plans, parts)


@settings(max_examples=150, deadline=None)
@given(worlds())
def test_planning_the_parts_one_by_one_gives_the_whole_plan(world: Any) -> None:
    blocks, live = world
    whole = plan_changes(blocks, live, PROFILE, header=HEADER)
    assert _by_parts(blocks, live) == whole
    assert repr(_by_parts(blocks, live)) == repr(whole)


def test_the_parts_of_curriculum_applicants_and_arrangements() -> None:
    def block(name: str, entity: str, *records: DesiredRecord) -> Block:
        return Block(name, entity, ("code",), records)

    ref = Ref("applicant", ("A1",), ("external_id",))
    blocks = [
        block("schools", "school"),
        block("applicants", "applicant"),
        block("credentials", "credential", _desired("credentials", "credential", 2, (ref, "T", "N"),
                                                    {"applicant_id": ref, "type": "T", "name": "N"})),
        block("subjects", "subject"),  # no record refers across: joined to schools by the unique code
        block("arrangements", "arrangement"),
    ]
    parts = plan_parts(blocks, PROFILE)
    assert [p.indexes for p in parts] == [(0, 3), (1, 2), (4,)]
    assert parts[0].entities == ("school", "course", "program", "subject")
    assert parts[1].entities == ("applicant", "credential")
    assert parts[2].entities == ("arrangement",)


def test_blocks_with_a_repeated_name_are_one_part() -> None:
    blocks = [Block("x", "school", ("code",), ()), Block("x", "applicant", ("external_id",), ())]
    assert [p.indexes for p in plan_parts(blocks, PROFILE)] == [(0, 1)]


def test_the_sample_plan_made_by_parts_while_pages_arrive_is_the_whole_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through `run_plan` against the sandbox: curriculum and arrangements, applicants and credentials
    (two parts), with the blocks' digests made beside their diffs."""
    monkeypatch.chdir(REPO)
    with serve_in_thread(SandboxOptions(seed=SAMPLE_SEED)) as sandbox:
        run = plan_against(sandbox, SAMPLE_MAPPINGS)
        env = environment_for(sandbox)

        async def fetched() -> dict[str, list[dict[str, Any]]]:
            async with ApiClient(env, PROFILE) as client:
                return await client.fetch_collections(run.live_counts)

        live = asyncio.run(fetched())
    assert [p.indexes for p in plan_parts(run.sources.blocks, PROFILE)] == [(0, 1, 2, 3, 6), (4, 5)]
    header = PlanHeader(run.plan.environment, run.plan.api_version, run.plan.base_url, run.plan.env_name,
                        run.plan.fingerprints, run.sources.findings, run.plan.created_at, run.plan.extra)
    whole = plan_changes(run.sources.blocks, live, PROFILE, header=header)
    assert replace(run.plan, digest=None) == whole
    assert run.plan.digest == plan_digest(whole)
