"""Planning a plan's parts one by one (as `loader plan` does while pages arrive) gives the whole plan."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from helpers.plan import REPO, SAMPLE_MAPPINGS, SAMPLE_SEED, Block, environment_for, plan_against
from helpers.worlds import desired, worlds
from hypothesis import given, settings

from loader.api.client import ApiClient
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.digest import plan_digest
from loader.plan.incremental.parts import joined_plan, plan_parts
from loader.plan.model import Plan
from loader.profile import load_profile
from loader.sandbox.server import SandboxOptions, serve_in_thread
from loader.source.records import DesiredRecord, Ref

PROFILE = load_profile()
HEADER = PlanHeader("sandbox", findings=())


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
        block("credentials", "credential", desired("credentials", "credential", 2, (ref, "T", "N"),
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
                        run.plan.fingerprints, run.sources.findings, run.plan.created_at,
                        run.plan.profile_fingerprint)
    whole = plan_changes(run.sources.blocks, live, PROFILE, header=header)
    assert replace(run.plan, digest=None) == whole
    assert run.plan.digest == plan_digest(whole)
