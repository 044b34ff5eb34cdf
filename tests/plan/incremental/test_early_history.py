"""With a history, records compared three-way as they are drafted (loader.plan.incremental.early with
`compare`, then `with_history(..., early=...)` per part) give the plan and digest of the three-way
plan made at once (`plan_changes(..., history=...)`), however the pages come in."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.plan import Block, environment_for, plan_against, write_workbook
from helpers.sandbox import Caller, fetch_token
from helpers.worlds import desired, worlds
from hypothesis import given, settings
from hypothesis import strategies as st
from test_early import Live, _arrivals

from loader import event_loop
from loader.api.client import ApiClient
from loader.config import load_config
from loader.history.baseline import record_baseline
from loader.history.comparable import comparable
from loader.history.digests import Digester
from loader.history.errors import HistoryError
from loader.history.head import new_head
from loader.history.lines import FieldMark, HistoryLine, Owner, line_digest
from loader.history.snapshot import Snapshot
from loader.history.store import History
from loader.live_records import updated_time
from loader.plan.baseline import baseline_of
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.digest import block_digest, plan_digest
from loader.plan.history_checks import refuse_wrong_history
from loader.plan.history_index import indexes
from loader.plan.history_pass import HistoryCompare, _three_way, with_history
from loader.plan.incremental.early import EarlyDrafter
from loader.plan.incremental.parts import joined_plan, plan_parts
from loader.plan.merge import merged_entries
from loader.plan.model import Plan
from loader.plan.run import PlanRun, run_plan
from loader.profile import load_profile
from loader.report.machine import dumps, plan_document
from loader.report.markdown import render as render_markdown
from loader.report.terminal import render_text
from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_thread

PROFILE = load_profile()
HEADER = PlanHeader("sandbox", findings=())
LOADER_USER = "loader-user"


def _stamp(draw: Callable[..., Any], live: Live) -> None:
    """`metadata.updated` on most live records: a time out of a few, by the loader or a person."""
    for records in live.values():
        for record in records:
            if draw(st.integers(0, 4)):
                record["metadata"] = {"updated": {"time": draw(st.sampled_from([1000, 2000])),
                                                  "user": draw(st.sampled_from([LOADER_USER, "staff"]))}}


def _history(draw: Callable[..., Any], blocks: list[Block], live: Live) -> History:
    """Lines for some of the records the two-way plan matched or creates: their own live id or another,
    their live record's time or another, each field's W that of live, of the sheet or of neither, owned
    by the block or by another; and lines of records no sheet names (dropped)."""
    digester = Digester(frozenset({"applicant", "credential"}), b"k" * 32)
    two_way = plan_changes(blocks, live, PROFILE, header=HEADER)
    desired = {(b.block, r.row): r for b in blocks for r in b.records}
    lines: dict[str, dict[str, str | HistoryLine]] = {}
    for block in two_way.blocks:
        ids = [str(r["id"]) for r in live.get(block.entity, [])]
        by_id = {str(r["id"]): r for r in live.get(block.entity, [])}
        entity = PROFILE.entity(block.entity)
        extra: list[Any] = [() for _ in range(draw(st.integers(0, 1)))]  # a record no sheet names
        rec: Any
        for rec in [*block.records, *extra]:
            if rec != () and not draw(st.booleans()):
                continue
            key = rec.key if rec != () else ("GONE",)
            own_id = rec.live_id if rec != () else None
            others = ids if ids and draw(st.integers(0, 5)) else [*ids, "gone"]  # seldom a live id not live
            live_id = own_id if own_id and draw(st.integers(0, 2)) else draw(st.sampled_from(others))
            time = updated_time(by_id.get(live_id, {})) if draw(st.booleans()) else draw(st.sampled_from([1000, 3000]))
            digests = digester.record(block.entity, key)
            marks = {}
            wanted = desired.get((block.name, rec.source)) if rec != () else None
            for name in (wanted.fields if wanted is not None else ("name",)):
                if name == "custom_attributes" or not draw(st.integers(0, 3)):
                    continue
                source = draw(st.sampled_from(["live", "sheet", "neither"]))
                value = {"live": by_id.get(live_id, {}).get(name), "neither": "zz",
                         "sheet": wanted.fields.get(name) if wanted is not None else None}[source]
                set_like = name in entity.set_fields
                owner = Owner("intake.xlsx", block.name) if draw(st.integers(0, 3)) else Owner("other.yaml", "other")
                marks[name] = FieldMark(owner, digests.written(name, comparable(name, value, entity), as_set=set_like))
            line = HistoryLine(digester.key_token(block.entity, key), digester.id_token(block.entity, live_id),
                               time, draw(st.sampled_from([LOADER_USER, "staff"])), marks)
            lines.setdefault(block.entity, {})[line.key] = line
    head = replace(new_head(), service_user_ids=(LOADER_USER,) if not draw(st.integers(0, 3)) else ())
    return History(Path("history"), head, True, digester, Snapshot(lines), None)


def _compared_early(blocks: list[Block], live: Live, history: History, draw: Callable[..., Any]) -> Plan:
    """What loader.plan.run does with a history: each part drafted as pages come in, each draft
    compared as it is made, the part planned and compared once all are in; block digests from the
    hashes of the compared drafts."""
    parts = plan_parts(blocks, PROFILE)
    plans, digests = [], []
    for part in parts:
        mine = part.blocks_of(blocks)
        collections = {e: live.get(e, []) for e in part.entities}
        compare = HistoryCompare(history, mine, PROFILE)
        let_go = draw(st.booleans())  # as `loader plan` drafts: desired records let go of once read no more
        drafter = EarlyDrafter(mine, PROFILE, part.refers, compare=compare.early, let_go=let_go,
                               referred_by=part.referred_by, let_go_live=draw(st.booleans()),
                               named_more_than_once=compare.named_more_than_once)
        so_far = dict.fromkeys(part.entities, 0)
        whole: Live = {}
        for entity, upto, last in _arrivals(draw, live, part.entities):
            arrived = collections[entity][so_far[entity]:upto]
            so_far[entity] = upto
            if last:
                whole[entity] = collections[entity]
                if len(whole) < len(collections):
                    drafter.draft(dict(whole), {})
            else:
                drafter.draft(dict(whole), {entity: arrived} if arrived else {},
                              nearly_whole={entity} if draw(st.booleans()) else set())
        plan = plan_changes(mine, collections, PROFILE, header=HEADER, early=drafter.settled(collections))
        indexed = indexes(history, collections, {b.entity for b in mine})
        refuse_wrong_history(history, indexed)
        merged = drafter.records_let_go(plan, drafter.drafts.merged) if let_go else drafter.drafts.merged
        plan = with_history(plan, mine, indexed, history, PROFILE, merged=merged, early=drafter, compare=compare)
        digests += [block_digest(b, drafter.block_hashes(i, b), with_history=True) for i, b in enumerate(plan.blocks)]
        assert digests[-len(plan.blocks):] == [block_digest(b, with_history=True) for b in plan.blocks]
        plans.append(plan)
    joined = joined_plan(plans, parts)
    by_index = dict(zip([i for p in parts for i in p.indexes], digests, strict=True))
    return replace(joined, digest=plan_digest(joined, [by_index[i] for i in sorted(by_index)]))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_records_compared_as_they_are_drafted_get_the_three_way_plan_made_at_once(data: st.DataObject) -> None:
    blocks, live = data.draw(worlds())
    _stamp(data.draw, live)
    history = _history(data.draw, blocks, live)
    try:
        at_once = plan_changes(blocks, live, PROFILE, header=HEADER, history=history)
    except HistoryError:
        # refused (another database, or behind): refused too when compared part by part
        # (which part's refusal is named first may differ)
        try:
            _compared_early(blocks, live, history, data.draw)
        except HistoryError:
            return
        raise AssertionError("the plan compared part by part was not refused") from None
    early = _compared_early(blocks, live, history, data.draw)
    assert replace(early, digest=None) == at_once
    assert repr(replace(early, digest=None)) == repr(at_once)
    assert early.digest == plan_digest(at_once)



def test_a_live_record_another_line_names_is_kept_whole_when_its_match_is_let_go_of() -> None:
    """A2's match, a-2, is also named by A1's line (A1's code changed in the platform: A1 is compared at
    the end against a-2, whole). A2 is let go of once compared; a-2 is not trimmed, and the plan is the
    one made at once. A3's match, which only its own line names, is trimmed."""
    people = Block("applicants", "applicant", ("external_id",), tuple(
        desired("applicants", "applicant", row, (code,), {"external_id": code, "first_name": "F", "last_name": "x"})
        for row, code in enumerate(["A1", "A2", "A3"], start=2)))
    stamp = {"updated": {"time": 1000, "user": LOADER_USER}}
    live: Live = {"applicant": [
        {"id": f"a-{n}", "external_id": f"A{n}", "first_name": "F", "last_name": "y", "metadata": stamp}
        for n in (1, 2, 3)], "credential": []}
    digester = Digester(frozenset({"applicant", "credential"}), b"k" * 32)
    lines: dict[str, str | HistoryLine] = {}
    for code, live_id in (("A1", "a-2"), ("A2", "a-2"), ("A3", "a-3")):
        digests = digester.record("applicant", (code,))
        marks = {"last_name": FieldMark(Owner("intake.xlsx", "applicants"), digests.written("last_name", "y"))}
        line = HistoryLine(digester.key_token("applicant", (code,)), digester.id_token("applicant", live_id),
                           1000, LOADER_USER, marks)
        lines[line.key] = line
    history = History(Path("history"), replace(new_head(), service_user_ids=(LOADER_USER,)), True, digester,
                      Snapshot({"applicant": lines}), None)
    at_once = plan_changes([people], json.loads(json.dumps(live)), PROFILE, header=HEADER, history=history)
    (part,) = plan_parts([people], PROFILE)
    compare = HistoryCompare(history, [people], PROFILE)
    drafter = EarlyDrafter([people], PROFILE, part.refers, compare=compare.early, let_go=True,
                           referred_by=part.referred_by, let_go_live=True,
                           named_more_than_once=compare.named_more_than_once)
    drafter.draft({"credential": []}, {"applicant": live["applicant"]})
    assert [sorted(r) for r in live["applicant"]] == [
        ["external_id", "first_name", "id", "last_name", "metadata"],  # A1's: its line names another
        ["external_id", "first_name", "id", "last_name", "metadata"],  # named by A1's line too
        ["external_id", "id", "metadata"]]
    plan = plan_changes([people], live, PROFILE, header=HEADER, early=drafter.settled(live))
    indexed = indexes(history, live, {"applicant"})
    merged = drafter.records_let_go(plan, drafter.drafts.merged)
    plan = with_history(plan, [people], indexed, history, PROFILE, merged=merged, early=drafter, compare=compare)
    assert plan == at_once
    assert plan.blocks[0].records[0].live_id == "a-2"  # A1: an update of the record its line names

def test_a_three_way_plan_made_while_the_pages_come_in_is_the_one_made_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through `run_plan` against the sandbox, 12 pages of subjects at 40 ms each, with a baseline and
    then a person's edits: most records are compared before the last page, and the plan, its digest
    and its reports are those of the three-way plan made of everything at once."""
    program = "00000000-0000-4000-8002-000000000001"
    seed = {"institution-a": {"programs": [{"id": program, "code": "P1", "name": "Program"}], "subjects": [
        {"code": f"S{n:04d}", "name": f"Subject {n}", "parent": {"id": program}} for n in range(1150)]}}
    (tmp_path / "seed.json").write_text(json.dumps(seed), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rows = [["Code", "Name", "Program"]] + [[f"S{n:04d}", f"Subject {n}", "P1"] for n in range(1200)]
    write_workbook(tmp_path / "subjects.xlsx", {"Subjects": rows})
    (tmp_path / "subjects.yaml").write_text(
        "version: 1\nsource: subjects.xlsx\nentities:\n  subjects:\n    entity: subject\n    sheet: Subjects\n"
        "    key: [code]\n    fields:\n      code: Code\n      name: Name\n"
        "      parent: {ref: program, column: Program}\n", encoding="utf-8")
    with serve_in_thread(SandboxOptions(seed=str(tmp_path / "seed.json"), faults=FaultOptions(latency_ms=40))) \
            as sandbox, httpx.Client(base_url=sandbox.base_url, timeout=30) as http:
        first = plan_against(sandbox, ["subjects.yaml"])
        live = _fetched(sandbox, first.live_counts)
        blocks = baseline_of(first.plan, first.sources, live, PROFILE)
        record_baseline(History.open(tmp_path / "history"), blocks, "sandbox", by="test")
        staff = Caller(http, fetch_token(sandbox.base_url, sandbox.staff_client_id, sandbox.staff_client_secret))
        ids = {r["code"]: r["id"] for r in live["subject"]}
        for n in (3, 500, 1100):  # a person's edits: kept, as the sheet still says what was recorded
            staff.patch(f"/institution/catalogue/subjects/{ids[f'S{n:04d}']}", {"name": "Edited"}).raise_for_status()
        rows[1 + 7][1] = rows[1 + 500][1] = "Renamed in the sheet"  # an update, and a conflict
        write_workbook(tmp_path / "subjects.xlsx", {"Subjects": rows})
        run = _planned(sandbox, History.open(tmp_path / "history"))
        planned_with = History.open(tmp_path / "history")
        lean = _planned(sandbox, planned_with, keep_records=False)  # as `loader plan` plans
        live = _fetched(sandbox, run.live_counts)
    assert run.early_records > 1100
    # each part's records let go of once it is planned: the same plan, the blocks without their records
    assert replace(lean.plan, created_at=run.plan.created_at) == run.plan and lean.plan.digest == run.plan.digest
    assert [len(b.records) for b in run.sources.blocks] == [1200] and [b.records for b in lean.sources.blocks] == [()]
    assert [replace(b, records=()) for b in run.sources.blocks] == list(lean.sources.blocks)
    with pytest.raises(HistoryError, match="opened for a plan"):  # its compared lines let go of too
        planned_with.begin_apply("sandbox", plan_digest=None, by=None)
    header = PlanHeader(run.plan.environment, run.plan.api_version, run.plan.base_url, run.plan.env_name,
                        run.plan.fingerprints, run.sources.findings, run.plan.created_at,
                        run.plan.profile_fingerprint)
    at_once = plan_changes(run.sources.blocks, live, PROFILE, header=header, history=History.open(tmp_path / "history"))
    assert replace(run.plan, digest=None) == at_once
    assert run.plan.digest == plan_digest(at_once)
    records = {r.key[0]: r for r in run.plan.records()}
    assert sum(r.history_line not in (None, "none") for r in records.values()) == 1150
    assert [k.field for k in records["S0003"].kept] == ["name"] and records["S0007"].payload == {
        "name": "Renamed in the sheet"}
    assert [c.field for c in records["S0500"].conflicts] == ["name"]
    at_once = replace(at_once, digest=plan_digest(at_once))
    assert render_markdown(run.plan) == render_markdown(at_once)
    assert render_text(run.plan) == render_text(at_once)
    assert dumps(plan_document(run.plan, 0)) == dumps(plan_document(at_once, 0))


def _fetched(sandbox: Any, entities: Iterable[str]) -> Live:
    async def go() -> Live:
        async with ApiClient(environment_for(sandbox), PROFILE) as client:
            return await client.fetch_collections(entities)

    return asyncio.run(go())


def _planned(sandbox: Any, history: History, *, keep_records: bool = True) -> PlanRun:
    config = load_config(None)
    env = environment_for(sandbox)

    async def go() -> PlanRun:
        async with ApiClient(env, config.profile) as client:
            return await run_plan([Path("subjects.yaml")], config=config, env=env, client=client, progress=False,
                                  history=history, keep_records=keep_records)

    return event_loop.run(go())


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_untouched_record_made_from_the_line_text_is_the_one_compared_in_full(data: st.DataObject) -> None:
    blocks, live = data.draw(worlds())
    _stamp(data.draw, live)
    history = _history(data.draw, blocks, live)
    compare = HistoryCompare(history, blocks, PROFILE)
    indexed = indexes(history, live, {b.entity for b in blocks})
    merged = merged_entries(blocks)
    for block, positions in zip(plan_changes(blocks, live, PROFILE, header=HEADER).blocks, merged.owner, strict=True):
        found = compare.block(block.name, block.entity, block.source_file)
        entity = indexed[block.entity]
        for position, plan in zip(positions, block.records, strict=True):
            token = history.digester.key_token(plan.entity, plan.key)
            live_record = entity.by_id.get(plan.live_id) if plan.live_id else None
            desired = merged.first_record(position)
            untouched = compare.untouched(plan, token, live_record, desired, found)
            if untouched is None:
                continue
            line = entity.line(token)
            assert line is not None
            by_line = entity.by_key.get(token)
            assert untouched == _three_way(plan, line, desired, live_record, by_line, compare, found)
            assert untouched.history_line == line_digest(line)
