"""Early drafts (loader.plan.incremental.early) are the plans made at the end, however the pages come in."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helpers.plan import Block, environment_for, plan_against, write_workbook
from helpers.worlds import desired, worlds
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.api.client import ApiClient
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.digest import block_digest, plan_digest
from loader.plan.incremental.early import EarlyDrafter
from loader.plan.incremental.parts import joined_plan, plan_parts
from loader.plan.marks import Marks
from loader.plan.model import Action, Plan, RecordPlan
from loader.profile import load_profile
from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_thread
from loader.source.records import Ref

PROFILE = load_profile()
HEADER = PlanHeader("sandbox", findings=())
Live = dict[str, list[dict[str, Any]]]


def _arrivals(draw: st.DrawFn, live: Live, entities: tuple[str, ...]) -> list[tuple[str, int, bool]]:
    """An order in which the collections' pages come in: (entity, records in so far, whether it is the
    last page), each collection's pages in order (some empty), the collections interleaved."""
    pages: dict[str, list[int]] = {}
    for entity in entities:
        n = len(live.get(entity, []))
        cuts = sorted(draw(st.lists(st.integers(0, n), max_size=3)))
        pages[entity] = [*cuts, n]
    order: list[tuple[str, int, bool]] = []
    while pages:
        entity = draw(st.sampled_from(sorted(pages)))
        upto = pages[entity].pop(0)
        order.append((entity, upto, not pages[entity]))
        if not pages[entity]:
            del pages[entity]
    return order


def _planned_early(blocks: list[Block], live: Live, draw: st.DrawFn) -> tuple[Plan, int]:
    """What loader.plan.run does: each part drafted as pages come in, then planned when all are in;
    the plan and how many records were drafted early."""
    parts = plan_parts(blocks, PROFILE)
    plans, drafted = [], 0
    for part in parts:
        mine = part.blocks_of(blocks)
        collections = {e: live.get(e, []) for e in part.entities}
        # as `loader plan` drafts them or not: each desired record let go of once nothing reads it again,
        # and its match but for what the end reads (the live records are changed: the plan at once was made)
        drafter = EarlyDrafter(mine, PROFILE, part.refers, let_go=draw(st.booleans()), referred_by=part.referred_by,
                               let_go_live=draw(st.booleans()))
        given_so_far = dict.fromkeys(part.entities, 0)
        whole: Live = {}
        for entity, upto, last in _arrivals(draw, live, part.entities):
            records = collections[entity]
            arrived = records[given_so_far[entity]:upto]
            given_so_far[entity] = upto
            if last:  # whole: its records all in
                whole[entity] = records
                if len(whole) < len(collections):  # the plan is made once all are in, with no draft between
                    drafter.draft(dict(whole), {})
            else:  # now and then with the word that few of its records are still to come
                nearly = {entity} if draw(st.booleans()) else set()
                drafter.draft(dict(whole), {entity: arrived} if arrived else {}, nearly_whole=nearly)
        drafted += drafter.drafts.count()
        plan = plan_changes(mine, collections, PROFILE, header=HEADER, early=drafter.settled(collections))
        # the hashes of the drafts, made as they were drafted, give the blocks' digests
        assert [block_digest(b, drafter.block_hashes(i, b)) for i, b in enumerate(plan.blocks)] \
            == [block_digest(b) for b in plan.blocks]
        plans.append(plan)
    return joined_plan(plans, parts), drafted


@st.composite
def early_worlds(draw: st.DrawFn) -> tuple[Plan, Plan, int]:
    blocks, live = draw(worlds())
    whole = plan_changes(blocks, live, PROFILE, header=HEADER)
    early, drafted = _planned_early(blocks, live, draw)
    return whole, early, drafted


@settings(max_examples=300, deadline=None)
@given(early_worlds())
def test_records_planned_as_pages_come_in_get_the_plan_made_at_the_end(world: tuple[Plan, Plan, int]) -> None:
    whole, early, _ = world
    assert early == whole
    assert repr(early) == repr(whole)


def test_a_subject_is_planned_on_its_match_and_the_first_repeat_is_its_match() -> None:
    parent = Ref("program", ("P1",))
    subjects = Block("subjects", "subject", ("code",), tuple(
        desired("subjects", "subject", row, (code,), {"code": code, "name": "New name", "parent": parent})
        for row, code in enumerate(["U1", "U2", "U3"], start=2)
    ))
    programs = Block("programs", "program", ("code",), (desired("programs", "program", 2, ("P1",),
                                                                {"code": "P1", "name": "P"}),))
    live: Live = {
        "program": [{"id": "p1", "code": "P1", "name": "P", "type": "PROGRAM"}],
        "subject": [{"id": "u1", "code": "U1", "name": "Old", "type": "SUBJECT", "parent": {"id": "p1"}},
                    {"id": "u2", "code": "U2", "name": "New name", "type": "SUBJECT", "parent": {"id": "p1"}},
                    {"id": "u1-again", "code": "U1", "name": "New name", "type": "SUBJECT", "parent": {"id": "p1"}}],
    }
    blocks = [programs, subjects]
    (part,) = plan_parts(blocks, PROFILE)
    gave_way: Counter[str] = Counter()  # the worker thread gives way to the event loop after each record
    drafter = EarlyDrafter(blocks, PROFILE, part.refers, give_way=lambda: gave_way.update(["draft"]))
    whole = {e: live.get(e, []) for e in ("school", "course", "program")}
    drafter.draft(whole, {"subject": live["subject"][:1]})
    assert drafter.drafts.drafted() == [0, 1]  # the program (its collection whole) and U1 (its match in)
    drafter.draft(whole, {"subject": live["subject"][1:]})
    assert drafter.drafts.drafted() == [0, 1, 2]  # U2; U1's repeat is not its match; U3 waits to be created
    assert _drafted(drafter, 1).action is Action.UPDATE and _drafted(drafter, 1).live_id == "u1"
    live = {**live, "school": [], "course": []}
    plan = plan_changes(blocks, live, PROFILE, header=HEADER, early=drafter.settled(live),
                        give_way=lambda: gave_way.update(["plan"]))
    assert plan == plan_changes(blocks, live, PROFILE, header=HEADER)
    assert [r.action for r in plan.blocks[1].records] == [Action.UPDATE, Action.UNCHANGED, Action.CREATE]
    hashes = drafter.block_hashes(1, plan.blocks[1])
    digest = block_digest(plan.blocks[1], hashes, give_way=lambda: gave_way.update(["hash"]))
    assert digest == block_digest(plan.blocks[1])
    assert gave_way == {"draft": 3, "plan": 1, "hash": 1}  # U3 alone is planned and hashed at the end


def test_the_match_of_a_record_let_go_of_keeps_what_the_end_reads_and_the_plan_is_the_same() -> None:
    """As `loader plan` drafts (`let_go`, `let_go_live`): a subject's match, once the subject is let go
    of, keeps its id, code (key, unique group, label) and metadata; its name and parent go. The program's
    match stays whole: a live subject still to come could claim its code, and be described by it."""
    parent = Ref("program", ("P1",))
    subjects = Block("subjects", "subject", ("code",), (
        desired("subjects", "subject", 2, ("U1",), {"code": "U1", "name": "New name", "parent": parent}),))
    programs = Block("programs", "program", ("code",), (
        desired("programs", "program", 2, ("P1",), {"code": "P1", "name": "P"}),))
    stamp = {"updated": {"time": 1_700_000_000_000, "user": {"id": "staff"}}}
    live: Live = {
        "school": [], "course": [],
        "program": [{"id": "p1", "code": "P1", "name": "P", "type": "PROGRAM"}],
        "subject": [{"id": "u1", "code": "U1", "name": "Old", "type": "SUBJECT", "parent": {"id": "p1"},
                     "metadata": stamp}],
    }
    blocks = [programs, subjects]
    at_once = plan_changes(blocks, json.loads(json.dumps(live)), PROFILE, header=HEADER)
    (part,) = plan_parts(blocks, PROFILE)
    drafter = EarlyDrafter(blocks, PROFILE, part.refers, let_go=True, referred_by=part.referred_by,
                           let_go_live=True)
    drafter.draft({e: live[e] for e in ("school", "course", "program")}, {"subject": live["subject"]})
    assert drafter.drafts.drafted() == [0, 1]
    assert live["subject"] == [{"id": "u1", "code": "U1", "metadata": stamp}]
    assert live["program"] == [{"id": "p1", "code": "P1", "name": "P", "type": "PROGRAM"}]
    plan = plan_changes(blocks, live, PROFILE, header=HEADER, early=drafter.settled(live))
    assert plan == at_once
    assert [r.action for r in plan.blocks[1].records] == [Action.UPDATE]


def test_a_record_waits_while_a_collection_its_references_reach_is_still_arriving() -> None:
    subjects = Block("subjects", "subject", ("code",), (
        desired("subjects", "subject", 2, ("U1",), {"code": "U1", "name": "U", "parent": Ref("program", ("P1",))}),
    ))
    live_subject = [{"id": "u1", "code": "U1", "name": "U", "type": "SUBJECT"}]
    (part,) = plan_parts([subjects], PROFILE)
    drafter = EarlyDrafter([subjects], PROFILE, part.refers)
    drafter.draft({"school": [], "course": []}, {"subject": live_subject, "program": []})
    assert drafter.drafts.drafted() == []  # its parent, a program, could not be resolved yet
    drafter.draft({"school": [], "course": [], "program": []}, {})
    assert _drafted(drafter, 0).live_id == "u1"  # the match that came in before is still its match


def test_a_draft_showing_an_unknown_live_id_is_not_kept_and_a_repeat_of_its_key_is_not_its_match() -> None:
    parent = Ref("program", ("P1",))
    subjects = Block("subjects", "subject", ("code",), (
        desired("subjects", "subject", 2, ("U1",), {"code": "U1", "name": "U", "parent": parent}),
    ))
    live: Live = {
        "school": [], "course": [], "program": [{"id": "p1", "code": "P1", "name": "P", "type": "PROGRAM"}],
        # its live parent: a record of no collection in yet (shown by its label at the end, if it has one)
        "subject": [{"id": "u1", "code": "U1", "name": "U", "type": "SUBJECT", "parent": {"id": "u2"}},
                    {"id": "u1-again", "code": "U1", "name": "U", "type": "SUBJECT", "parent": {"id": "p1"}},
                    {"id": "u2", "code": "U2", "name": "U", "type": "SUBJECT"}],
    }
    (part,) = plan_parts([subjects], PROFILE)
    drafter = EarlyDrafter([subjects], PROFILE, part.refers)
    whole = {e: live[e] for e in ("school", "course", "program")}
    drafter.draft(whole, {"subject": live["subject"][:2]})
    assert drafter.drafts.drafted() == []
    plan = plan_changes([subjects], live, PROFILE, header=HEADER, early=drafter.settled(live))
    assert plan == plan_changes([subjects], live, PROFILE, header=HEADER)
    (record,) = plan.blocks[0].records
    assert record.live_id == "u1" and [(c.old, c.new) for c in record.changes] == [("U2", "P1")]


def test_records_not_matched_when_few_are_to_come_are_planned_as_creates_until_a_match_comes() -> None:
    subjects = Block("subjects", "subject", ("code",), tuple(
        desired("subjects", "subject", row, (code,), {"code": code, "name": "U"})
        for row, code in enumerate(["U1", "U2", "U3"], start=2)
    ))
    live: Live = {"school": [], "course": [], "program": [],
                  "subject": [{"id": "u1", "code": "U1", "name": "U", "type": "SUBJECT"},
                              {"id": "u2", "code": "U2", "name": "U", "type": "SUBJECT"},
                              {"id": "u3", "code": "u3", "name": "U", "type": "SUBJECT"}]}
    (part,) = plan_parts([subjects], PROFILE)
    drafter = EarlyDrafter([subjects], PROFILE, part.refers)
    whole = {e: live[e] for e in ("school", "course", "program")}
    drafter.draft(whole, {"subject": live["subject"][:1]}, nearly_whole={"subject"})
    assert drafter.drafts.drafted() == [0, 1, 2]
    assert _drafted(drafter, 1).action is _drafted(drafter, 2).action is Action.CREATE
    drafter.draft(whole, {"subject": live["subject"][1:2]})
    # U2's match came after all
    assert _drafted(drafter, 1).live_id == "u2" and _drafted(drafter, 2).action is Action.CREATE
    # U3's near duplicate 'u3' comes in last: U3 is planned again at the end, with the warning
    early = drafter.settled(live)
    assert early.drafted() == [0, 1]
    plan = plan_changes([subjects], live, PROFILE, header=HEADER, early=early)
    assert plan == plan_changes([subjects], live, PROFILE, header=HEADER)
    assert [f.code for f in plan.blocks[0].records[2].findings] == ["near-duplicate-key"]


def test_a_plan_made_while_the_pages_come_in_is_the_plan_made_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through `run_plan` against the sandbox, 12 pages of subjects at 40 ms each: most records are
    planned before the last page (the last tenth's records not matched yet as creates), and the plan,
    digest included, is the one made of everything at once."""
    program = "00000000-0000-4000-8002-000000000001"
    live_subjects = [{"code": f"S{n:04d}", "name": f"Subject {n}", "parent": {"id": program}} for n in range(1150)]
    live_subjects.append({"code": "s1180", "name": "Near", "parent": {"id": program}})  # near a record to create
    seed = {"institution-a": {"programs": [{"id": program, "code": "P1", "name": "Program"}],
                              "subjects": live_subjects}}
    seed_file = tmp_path / "seed.json"
    seed_file.write_text(json.dumps(seed), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rows = [["Code", "Name", "Program"]]
    rows += [[f"S{n:04d}", f"Subject {n}" + (" (renamed)" if n % 7 == 0 else ""), "P1"] for n in range(1200)]
    write_workbook(tmp_path / "subjects.xlsx", {"Subjects": rows})
    (tmp_path / "subjects.yaml").write_text(
        "version: 1\nsource: subjects.xlsx\nentities:\n  subjects:\n    entity: subject\n    sheet: Subjects\n"
        "    key: [code]\n    fields:\n      code: Code\n      name: Name\n"
        "      parent: {ref: program, column: Program}\n",
        encoding="utf-8",
    )
    with serve_in_thread(SandboxOptions(seed=str(seed_file), faults=FaultOptions(latency_ms=40))) as sandbox:
        run = plan_against(sandbox, ["subjects.yaml"])
        env = environment_for(sandbox)

        async def fetched() -> dict[str, list[dict[str, Any]]]:
            async with ApiClient(env, PROFILE) as client:
                return await client.fetch_collections(run.live_counts)

        live = asyncio.run(fetched())
    assert run.early_records > 1100  # more than matched by the pages before the last: creates planned early
    header = PlanHeader(run.plan.environment, run.plan.api_version, run.plan.base_url, run.plan.env_name,
                        run.plan.fingerprints, run.sources.findings, run.plan.created_at,
                        run.plan.profile_fingerprint)
    whole = plan_changes(run.sources.blocks, live, PROFILE, header=header)
    assert replace(run.plan, digest=None) == whole
    assert run.plan.digest == plan_digest(whole)
    records = run.plan.records()
    assert Counter(r.action.value for r in records) == {"create": 50, "update": 165, "unchanged": 985}
    assert [f.code for f in records[1180].findings] == ["near-duplicate-key"]


def test_records_sharing_a_ref_are_planned_at_the_end() -> None:
    """Two blocks share a name (the plan is refused for it, but still shown): an application and a credential
    with keys shown alike have one ref, and the resolver remembers a key's match by ref, so which of them
    is matched first decides the other's match. Nothing of such a part is planned early."""
    ref = Ref("applicant", ("A1",), ("external_id",))
    blocks = [
        Block("intake", "credential", ("applicant_id", "name"), (
            desired("intake", "credential", 2, (ref, "Online"), {"applicant_id": ref, "type": "TERTIARY",
                                                                  "name": "Online"}),)),
        Block("intake", "application", ("applicant_id", "delivery"), (
            desired("intake", "application", 2, (ref, "Online"), {"applicant_id": ref, "delivery": "Online"}),)),
    ]
    live: Live = {"applicant": [{"id": "a-1", "external_id": "A1"}], "application": [],
                  "credential": [{"id": "cr-1", "applicant_id": "a-1", "type": "TERTIARY", "name": "Online"}]}
    (part,) = plan_parts(blocks, PROFILE)
    assert sorted(part.entities) == sorted(live)
    drafter = EarlyDrafter(blocks, PROFILE, part.refers)
    drafter.draft({"applicant": live["applicant"], "application": []}, {"credential": live["credential"]})
    plan = plan_changes(blocks, live, PROFILE, header=HEADER, early=drafter.settled(live))
    assert plan == plan_changes(blocks, live, PROFILE, header=HEADER)


def _drafted(drafter: EarlyDrafter, position: int) -> RecordPlan:
    plan = drafter.drafts.plans[position]
    assert plan is not None, f"entry {position} is not drafted"
    return plan


def test_the_marks_of_live_keys_come_in_are_all_found_and_few_others_are() -> None:
    """`Marks` answers "maybe" for every mark added; for another, rarely (a record then waits to be
    planned at the end, as it would if the mark were there)."""
    marks = random.Random(7)
    added = [marks.getrandbits(60) for _ in range(50_000)]
    others = [marks.getrandbits(60) for _ in range(50_000)]
    folded = Marks(len(added))
    for mark in added:
        folded.add(mark)
    assert all(mark in folded for mark in added)
    assert sum(mark in folded for mark in others) < len(others) // 200
