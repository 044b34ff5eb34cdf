"""With a history, the scheduler's plan (each part planned by `plan_changes` as soon as its
collections are in, its block digests made then) is the three-way plan `plan_changes` makes of
everything at once: part by part over generated worlds, and through `run_plan` against a real
sandbox while its pages come in."""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.plan import Block, environment_for, write_workbook
from helpers.sandbox import Caller, fetch_token
from helpers.worlds import worlds
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.api.client import ApiClient
from loader.config import load_config
from loader.history.baseline import record_baseline
from loader.history.comparable import comparable
from loader.history.digests import Digester
from loader.history.errors import HistoryError
from loader.history.head import new_head
from loader.history.lines import FieldMark, HistoryLine, Owner
from loader.history.snapshot import Snapshot
from loader.history.store import History
from loader.live_records import updated_time
from loader.plan.baseline import baseline_of
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.digest import block_digest, plan_digest
from loader.plan.editors import with_editor_names
from loader.plan.incremental.parts import joined_plan, plan_parts
from loader.plan.last_loaded import with_last_loaded
from loader.plan.model import Plan
from loader.plan.run import PlanRun, run_plan
from loader.profile import load_profile
from loader.report.machine import dumps, plan_document
from loader.report.markdown import render as render_markdown
from loader.report.terminal import render_text
from loader.sandbox.server import FaultOptions, RunningSandbox, SandboxOptions, serve_in_thread
from loader.sandbox.tokens import DEFAULT_CLIENTS

PROFILE = load_profile()
HEADER = PlanHeader("sandbox", findings=())
LOADER_USER = "loader-user"
STAFF_ID = next(c.user["id"] for c in DEFAULT_CLIENTS if c.client_id == "staff-client")
Live = dict[str, list[dict[str, Any]]]


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


def _by_parts(blocks: list[Block], live: Live, history: History) -> Plan:
    """What the scheduler (`loader.plan.incremental.diffing`) does with a history: each part planned
    with only the collections it needs, its blocks digested then; the parts joined."""
    parts = plan_parts(blocks, PROFILE)
    plans: list[Plan] = []
    digests: dict[int, str] = {}
    for part in parts:
        plan = plan_changes(part.blocks_of(blocks), {e: live.get(e, []) for e in part.entities}, PROFILE,
                            header=HEADER, history=history)
        digests.update((i, block_digest(b, with_history=True)) for i, b in zip(part.indexes, plan.blocks, strict=True))
        plans.append(plan)
    joined = joined_plan(plans, parts)
    return replace(joined, digest=plan_digest(joined, [digests[i] for i in sorted(digests)]))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_three_way_plan_made_part_by_part_is_the_one_made_at_once(data: st.DataObject) -> None:
    blocks, live = data.draw(worlds())
    _stamp(data.draw, live)
    history = _history(data.draw, blocks, live)
    try:
        at_once = plan_changes(blocks, live, PROFILE, header=HEADER, history=history)
    except HistoryError:
        # refused (another database, or behind): refused too part by part (which part's refusal is
        # named first may differ)
        with pytest.raises(HistoryError):
            _by_parts(blocks, live, history)
        return
    by_parts = _by_parts(blocks, live, history)
    assert replace(by_parts, digest=None) == at_once
    assert repr(replace(by_parts, digest=None)) == repr(at_once)
    assert by_parts.digest == plan_digest(at_once)


def test_a_three_way_plan_made_while_the_pages_come_in_is_the_one_made_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through `run_plan` against the sandbox, 12 pages of subjects at 40 ms each, with a baseline and
    then a person's edits: the plan, its digest and its reports are those of the three-way plan made
    of everything at once, and so are they when the records are let go of part by part."""
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
        first = _planned(sandbox, None)
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
        lean = _planned(sandbox, History.open(tmp_path / "history"), keep_sources=False)  # as `loader plan` plans
        live = _fetched(sandbox, run.live_counts)
    # each part's records let go of once it is planned: the same plan, the blocks without their records
    assert replace(lean.plan, created_at=run.plan.created_at) == run.plan and lean.plan.digest == run.plan.digest
    assert [len(b.records) for b in run.sources.blocks] == [1200] and [b.records for b in lean.sources.blocks] == [()]
    assert [replace(b, records=()) for b in run.sources.blocks] == list(lean.sources.blocks)
    header = PlanHeader(run.plan.environment, run.plan.api_version, run.plan.base_url, run.plan.env_name,
                        run.plan.fingerprints, run.sources.findings, run.plan.created_at,
                        run.plan.profile_fingerprint)
    history = History.open(tmp_path / "history")
    at_once = plan_changes(run.sources.blocks, live, PROFILE, header=header, history=history)
    # as a plan describes its conflicts and kept edits: the value last loaded, the editor by name
    at_once = with_editor_names(with_last_loaded(at_once, history), {STAFF_ID: "Robin Staff"})
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


def _planned(sandbox: Any, history: History | None, *, keep_sources: bool = True,
             mappings: Iterable[Path] = (Path("subjects.yaml"),)) -> PlanRun:
    config = load_config(None)
    env = environment_for(sandbox)

    async def go() -> PlanRun:
        async with ApiClient(env, config.profile) as client:
            return await run_plan(list(mappings), config=config, env=env, client=client, progress=False,
                                  history=history, keep_sources=keep_sources)

    return asyncio.run(go())


_SUBJECTS = 150
_MAPPING = ("version: 1\nsource: subjects.xlsx\nentities:\n  subjects:\n    entity: subject\n    sheet: Subjects\n"
            "    key: [code]\n    fields:\n      code: Code\n      name: Name\n"
            "      parent: {ref: program, column: Program}\n")


@pytest.fixture(scope="module")
def subjects_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSandbox]:
    """A sandbox of one program and its subjects, a few pages of them, each page a little late."""
    program = "00000000-0000-4000-8002-000000000001"
    seed = {"institution-a": {"programs": [{"id": program, "code": "P1", "name": "Program"}], "subjects": [
        {"code": f"S{n:04d}", "name": f"Subject {n}", "parent": {"id": program}} for n in range(_SUBJECTS)]}}
    folder = tmp_path_factory.mktemp("seed")
    (folder / "seed.json").write_text(json.dumps(seed), encoding="utf-8")
    with serve_in_thread(SandboxOptions(seed=str(folder / "seed.json"), faults=FaultOptions(latency_ms=5))) as sandbox:
        yield sandbox


@settings(max_examples=8, deadline=None)
@given(st.data())
def test_the_scheduled_three_way_plan_against_a_sandbox_is_the_pure_plan(
    subjects_sandbox: RunningSandbox, data: st.DataObject
) -> None:
    """`run_plan` with a history (a baseline or none yet), after a person's edits and a sheet that
    renames, adds and leaves out records, gives the plan and digest of `plan_changes` at once over
    the same records, live collections and history."""
    sandbox = subjects_sandbox
    codes = sorted(data.draw(st.sets(st.integers(0, _SUBJECTS + 9), min_size=1, max_size=40)))
    with tempfile.TemporaryDirectory() as temporary, \
            httpx.Client(base_url=sandbox.base_url, timeout=30) as http:
        folder = Path(temporary)
        mapping = folder / "subjects.yaml"
        mapping.write_text(_MAPPING, encoding="utf-8")
        rows: list[list[Any]] = [["Code", "Name", "Program"], *([f"S{n:04d}", f"Subject {n}", "P1"] for n in codes)]
        write_workbook(folder / "subjects.xlsx", {"Subjects": rows})
        if data.draw(st.booleans(), label="baseline"):
            first = _planned(sandbox, None, mappings=[mapping])
            live = _fetched(sandbox, first.live_counts)
            blocks = baseline_of(first.plan, first.sources, live, PROFILE)
            record_baseline(History.open(folder / "history"), blocks, "sandbox", by="test")
        staff = Caller(http, fetch_token(sandbox.base_url, sandbox.staff_client_id, sandbox.staff_client_secret))
        ids = {r["code"]: r["id"] for r in _fetched(sandbox, ["subject"])["subject"]}
        for n in data.draw(st.sets(st.integers(0, _SUBJECTS - 1), max_size=5), label="edited"):
            staff.patch(f"/institution/catalogue/subjects/{ids[f'S{n:04d}']}", {"name": f"Edited {n}"}) \
                .raise_for_status()
        for row in rows[1:]:
            if data.draw(st.integers(0, 4), label="renamed") == 0:
                row[1] = "Renamed in the sheet"
        write_workbook(folder / "subjects.xlsx", {"Subjects": rows})
        keep_sources = data.draw(st.booleans(), label="keep_sources")
        run = _planned(sandbox, History.open(folder / "history"), mappings=[mapping], keep_sources=keep_sources)
        sources = _planned(sandbox, None, mappings=[mapping]).sources  # the same sheet read again
        live = _fetched(sandbox, run.live_counts)
        header = PlanHeader(run.plan.environment, run.plan.api_version, run.plan.base_url, run.plan.env_name,
                            run.plan.fingerprints, sources.findings, run.plan.created_at,
                            run.plan.profile_fingerprint)
        history = History.open(folder / "history")
        at_once = plan_changes(sources.blocks, live, PROFILE, header=header, history=history)
        # as a plan describes its conflicts and kept edits: the value last loaded, the editor by name
        if history.started:
            at_once = with_last_loaded(at_once, history)
        at_once = with_editor_names(at_once, {STAFF_ID: "Robin Staff"})
    assert replace(run.plan, digest=None) == at_once
    assert run.plan.digest == plan_digest(at_once)
