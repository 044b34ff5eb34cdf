"""`apply_plan(..., history=)`: each write journaled as its answer arrives, the journal finished
however the apply ends (done, failed, interrupted), and no trace of an apply that wrote nothing.
Against a real sandbox (uvicorn on loopback), with plans built by hand and a history on a tmp folder."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.apply import PROFILE, client_for, make_plan, record

from loader.apply.executor import ApplyOptions, apply_plan
from loader.apply.results import Outcome, RecordResult, Results
from loader.history.digests import expand_id
from loader.history.journal import Journal
from loader.history.store import History
from loader.plan.model import Action, FieldChange, Plan, RecordPlan
from loader.sandbox.server import SandboxOptions, serve_in_thread


@pytest.fixture
def sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions()) as running:
        yield running


def _apply(sandbox: Any, plan: Plan, history: History, **kw: Any) -> Results:
    async def go() -> Results:
        async with client_for(sandbox, concurrency=4) as client:
            return await apply_plan(plan, client, PROFILE, ApplyOptions(concurrency=4), history=history,
                                    journal_by="tester", **kw)

    return asyncio.run(go())


def _school(code: str, name: str, **values: Any) -> RecordPlan:
    payload = {"code": code, "name": name}
    changes = tuple(FieldChange(field, None, value) for field, value in payload.items())
    return record("schools", "school", code, payload, changes=changes, **values)


def _schools(*records: RecordPlan) -> Plan:
    return make_plan(("schools", "school", records))


def _last(history: History) -> Journal:
    """The journal of the last apply that wrote (two applies in one second sort by their random part)."""
    return next(j for j in history.journals() if j.info.apply_id == history.head.last_apply)


def test_every_write_is_journaled_with_its_answer_and_the_head_moves_once(sandbox: Any, tmp_path: Path) -> None:
    history = History.open(tmp_path)
    results = _apply(sandbox, _schools(*(_school(f"J{i}", f"School {i}") for i in range(6))), history)
    assert results.ok
    (journal,) = history.journals()
    assert journal.info.by == "tester" and journal.counts is not None and journal.counts["created"] == 6
    assert sorted(e.kind for e in journal.entries) == ["create"] * 6
    ids = {r.key: r.id for r in results.records}
    for entry in journal.entries:
        key = (entry.key.strip('["]'),)
        assert expand_id(entry.live_id or "") == ids[key]
        assert entry.fields["name"].written == history.digester.value("school", key, "name", f"School {key[0][1:]}")
        assert entry.updated is not None and entry.updated[1] is not None
    assert history.head.serial == 1 and len(history.head.service_user_ids) == 1
    line = History.open(tmp_path).line("school", ("J0",))
    assert line is not None and expand_id(line.live_id) == ids[("J0",)] and set(line.fields) == {"code", "name"}

    # An update: the value before is kept (not personal), W moves, the head moves once more.
    update = record("schools", "school", "J0", {"name": "Renamed"}, action=Action.UPDATE, live_id=ids[("J0",)],
                    changes=(FieldChange("name", "School 0", "Renamed"),))
    assert _apply(sandbox, _schools(update), history).ok
    entry = _last(history).entries[0]
    assert entry.kind == "update" and entry.fields["name"].before == "School 0"
    assert history.head.serial == 2


def test_an_apply_that_writes_nothing_leaves_no_trace(sandbox: Any, tmp_path: Path) -> None:
    history = History.open(tmp_path)
    assert _apply(sandbox, _schools(_school("N0", "School")), history).ok
    head = (tmp_path / "head.json").read_bytes()
    unchanged = record("schools", "school", "N0", {}, action=Action.UNCHANGED, live_id="x")
    blocked = _school("N1", "Blocked", blocked=True)
    results = _apply(sandbox, _schools(unchanged, blocked), history)
    assert [r.outcome for r in results.records] == [Outcome.UNCHANGED, Outcome.SKIPPED]
    assert len(history.journals()) == 1 and history.leftovers() == []
    assert (tmp_path / "head.json").read_bytes() == head


def test_a_failed_or_interrupted_apply_keeps_what_it_wrote(sandbox: Any, tmp_path: Path) -> None:
    history = History.open(tmp_path)
    # The second create of the same code meets a 409 the run cannot explain: it fails, the rest goes on.
    plan = _schools(_school("F0", "First"), *(_school(f"F{i}", f"School {i}") for i in range(1, 20)))
    assert _apply(sandbox, _schools(_school("F0", "Made elsewhere")), history).ok
    stop = asyncio.Event()
    done: list[RecordResult] = []

    def listener(result: RecordResult) -> None:
        done.append(result)
        if len(done) == 5:
            stop.set()

    results = _apply(sandbox, plan, history, stop=stop, listener=listener)
    assert results.interrupted
    journal = _last(history)
    created = [r for r in results.records if r.outcome is Outcome.CREATED]
    assert created and len([e for e in journal.entries if e.kind == "create"]) == len(created)
    assert journal.counts is not None and journal.counts["interrupted"] == 1
    assert journal.counts.get("failed", 0) == sum(r.outcome is Outcome.FAILED for r in results.records)
    assert history.head.serial == 2 and history.leftovers() == []


def test_confirmations_move_w_in_any_apply_and_only_a_write_moves_the_head(sandbox: Any, tmp_path: Path) -> None:
    history = History.open(tmp_path)
    results = _apply(sandbox, _schools(_school("C0", "School")), history)
    live_id = results.records[0].id
    confirmed = record("schools", "school", "C0", {}, action=Action.UNCHANGED, live_id=live_id,
                       confirmed=("name",), written_after=(("name", "Wconfirmed00"),),
                       confirmed_values=(("name", "School"),))
    head = (tmp_path / "head.json").read_bytes()
    assert _apply(sandbox, _schools(confirmed), history).ok  # the platform and the sheet agree: W moves
    assert len(history.journals()) == 2 and (tmp_path / "head.json").read_bytes() == head
    (entry,) = _last(history).entries
    assert (entry.fields["name"].after, entry.fields["name"].has_after) == ("School", True)  # the value after
    line = History.open(tmp_path).line("school", ("C0",))
    assert line is not None and line.fields["name"].written == "Wconfirmed00"

    assert _apply(sandbox, _schools(confirmed, _school("C1", "Another")), history).ok
    journal = _last(history)
    assert sorted(e.kind for e in journal.entries) == ["confirm", "create"]
    line = History.open(tmp_path).line("school", ("C0",))
    assert line is not None and line.fields["name"].written == "Wconfirmed00"
    assert line.fields["code"].written != "Wconfirmed00"  # a field not confirmed keeps its W
