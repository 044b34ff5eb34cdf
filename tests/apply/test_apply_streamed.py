"""`loader apply --plan` of a sealed plan.json: whatever the whole plan decides is checked before the
first write (by the seal's counts, or by reading the plan whole when its seal does not hold), and its
records are read while the earlier ones are written, with the results of a plan read whole first.
The projects keep no history (`history: false`), except where said: with one that moved since the
plan was made, every record's history line is checked before the first write, so the plan is read
whole first."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from helpers.api import writes_answered
from helpers.apply import client_for, loader_yaml_for, make_plan, record

from loader.commands import apply as apply_command
from loader.config import load_config
from loader.errors import EXIT_ERROR, PlanError
from loader.files.fingerprints import fingerprint_inputs
from loader.findings import Finding
from loader.places import CellRef
from loader.plan.masking import masked_plan
from loader.plan.model import Action, PendingId, Plan, RecordPlan
from loader.plan.plan_dict import plan_to_dict
from loader.plan.plan_file import write_plan_json
from loader.plan.plan_seal import SEAL_OPEN
from loader.plan.plan_stream import SealedPlan, open_saved_plan
from loader.sandbox.server import SandboxOptions, serve_in_thread

SEED = {
    "institution-a": {
        "schools": [
            {"id": f"00000000-0000-4000-8000-00000000000{i}", "code": f"S{i}", "name": f"School {i}"}
            for i in range(3)
        ]
    }
}
NEW_SCHOOLS = 20
COURSES_PER_SCHOOL = 100  # the courses' records take several batches of plan.json


@pytest.fixture
def sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions(seed=SEED)) as running:
        yield running


@pytest.fixture
def project(tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _project(tmp_path / "project", sandbox, monkeypatch)


def _project(folder: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch, *, history: bool = False) -> Path:
    folder.mkdir()
    (folder / "loader.yaml").write_text(
        loader_yaml_for(sandbox, "STREAMED_TEST_SECRET", top="" if history else "history: false\n",
                        settings="    retry: {attempts: 6, wait_initial: 0.01, wait_max: 0.2}\n"),
        encoding="utf-8",
    )
    monkeypatch.setenv("STREAMED_TEST_SECRET", sandbox.client_secret)
    monkeypatch.chdir(folder)
    workbook = openpyxl.Workbook()
    workbook.active.title = "schools"
    workbook.active.append(["Code", "Name"])
    workbook.save(folder / "curriculum.xlsx")
    return folder


def _live(sandbox: Any) -> dict[str, list[dict[str, Any]]]:
    async def go() -> dict[str, list[dict[str, Any]]]:
        async with client_for(sandbox) as client:
            return await client.fetch_collections(["school", "course"])

    return asyncio.run(go())


def _course(code: str, school: str, row: int, **values: Any) -> RecordPlan:
    parent = values.pop("parent", {"id": PendingId(f"schools/{school}")})
    depends = () if "refers_to" in values else (f"schools/{school}",)
    return record("courses", "course", code, {"code": code, "name": f"Course {code}", "parent": parent},
                  row=row, depends_on=depends, **values)


def _error(row: int) -> Finding:
    return Finding("error", "x", "bad name", CellRef("curriculum.xlsx", "schools", cell=f"B{row}", row=row))


def _plan(project: Path, sandbox: Any, *, course_error: bool = False) -> Plan:
    """Schools (3 updates, creates, one create the service refuses, one with an error) and their
    courses (one referring to S1 by its live id, one under each of the refused and the erring school)."""
    live = {s["code"]: s for s in _live(sandbox)["school"]}
    schools = [
        record("schools", "school", f"S{i}", {"name": f"Renamed {i}"}, action=Action.UPDATE, row=i + 2,
               live_id=live[f"S{i}"]["id"], live_updated_time=live[f"S{i}"]["metadata"]["updated"]["time"])
        for i in range(3)
    ]
    schools += [record("schools", "school", f"N{i}", {"code": f"N{i}", "name": f"New {i}"}, row=i + 5)
                for i in range(NEW_SCHOOLS)]
    schools.append(record("schools", "school", "BAD", {"code": "BAD", "name": "Bad", "bogus": 1}, row=90))
    schools.append(record("schools", "school", "ERR", {"code": "ERR", "name": ""}, row=91, findings=(_error(91),),
                          blocked=True))
    courses = [_course(f"C{i}-{j}", f"N{i}", row=2 + i * COURSES_PER_SCHOOL + j)
               for i in range(NEW_SCHOOLS) for j in range(COURSES_PER_SCHOOL)]
    courses += [_course("CBAD", "BAD", row=5000), _course("CERR", "ERR", row=5001, blocked=True),
                _course("CS1", "S1", row=5002, parent={"id": live["S1"]["id"]}, refers_to=("schools/S1",))]
    if course_error:  # an error in the last block's last record
        courses[-1] = replace(courses[-1], findings=(_error(5002),), blocked=True)
    plan = make_plan(("schools", "school", schools), ("courses", "course", courses))
    return replace(plan, env_name="local", base_url=sandbox.base_url,
                   fingerprints=fingerprint_inputs([project / "curriculum.xlsx"]),
                   blocks=tuple(replace(b, source_file="curriculum.xlsx") for b in plan.blocks))


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    apply_command.add_arguments(parser)
    return apply_command.run(apply_command.request_from(parser.parse_args(argv)), load_config(None))


def _rename(sandbox: Any, code: str, name: str) -> None:
    async def go() -> None:
        async with client_for(sandbox) as client:
            found = await client.get("school", code)
            assert found is not None
            await client.update("school", found["id"], {"name": name})

    asyncio.run(go())


def _journaled(folder: Path, kind: str = "update") -> None:
    """An apply of the history in `folder` (writing, or with `kind` "confirm" only confirming)."""
    from loader.history.journal import FieldWrite
    from loader.history.lines import Owner
    from loader.history.store import History

    history = History.open(folder)
    writer = history.begin_apply("local", plan_digest=None, by="test")
    writer.record(kind, "school", ("S1",), "id-1", [FieldWrite("name", Owner("s.yaml", "s"), after="x")],
                  updated=(1, "loader-user"))
    history.finish_apply(writer)



def _outcomes(project: Path) -> list[tuple[str, str, str, bool]]:
    """Each record's outcome, message (the times a stale one names left out) and whether errors blocked it."""
    records = json.loads((project / "out.json").read_text(encoding="utf-8"))["records"]
    return [(r["ref"], r["outcome"], re.sub(r"\(updated [^)]*\)", "(updated …)", r.get("message") or ""),
             bool(r.get("blocked"))) for r in records]


def test_a_sealed_plan_applied_as_it_is_read_has_the_results_of_the_plan_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcomes, names = [], []
    for sealed in (True, False):
        with serve_in_thread(SandboxOptions(seed=SEED)) as sandbox:
            project = _project(tmp_path / f"sealed-{sealed}", sandbox, monkeypatch)
            plan = _plan(project, sandbox)
            if sealed:
                write_plan_json(plan, project / "plan.json")
            else:  # a plan.json without a seal (as written before plans had one)
                data = plan_to_dict(masked_plan(plan))
                (project / "plan.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
            opened = open_saved_plan(project / "plan.json")
            assert isinstance(opened, SealedPlan) is sealed
            if isinstance(opened, SealedPlan):  # read as the apply reads it: the courses in two batches or more
                assert len(list(opened.batches())) >= 3
            _rename(sandbox, "S1", "Changed by someone else")  # stale: S1 skipped, and CS1 referring to it
            assert _run("--plan", "plan.json", "--env", "local", "--partial", "--results", "out.json") == EXIT_ERROR
            outcomes.append(_outcomes(project))
            names.append(sorted((r["code"], r["name"]) for entity in _live(sandbox).values() for r in entity))
    assert outcomes[0] == outcomes[1]
    assert names[0] == names[1]
    found = {ref: (outcome, message, blocked) for ref, outcome, message, blocked in outcomes[0]}
    assert found["schools/S1"][0] == "skipped" and found["schools/S1"][1].startswith("stale: changed")
    assert found["courses/CS1"] == ("skipped", "not applied: refers to schools/S1, skipped", False)
    assert found["schools/BAD"][0] == "failed"
    assert found["courses/CBAD"] == ("skipped", "not applied: depends on schools/BAD, which failed", False)
    assert found["schools/ERR"][2] and found["courses/CERR"][2]
    assert sum(outcome == "created" for outcome, _, _ in found.values()) == NEW_SCHOOLS * (1 + COURSES_PER_SCHOOL)


def test_a_sealed_plan_with_an_error_in_its_last_record_writes_nothing(project: Path, sandbox: Any) -> None:
    write_plan_json(_plan(project, sandbox, course_error=True), project / "plan.json")
    assert isinstance(open_saved_plan(project / "plan.json"), SealedPlan)
    sandbox.reset_stats()
    with pytest.raises(PlanError, match=r"the plan has 2 errors; nothing was applied"):
        _run("--plan", "plan.json", "--env", "local")
    assert writes_answered(sandbox) == 0
    assert len(_live(sandbox)["school"]) == 3


def test_a_sealed_plan_over_max_changes_writes_nothing(project: Path, sandbox: Any) -> None:
    write_plan_json(_plan(project, sandbox), project / "plan.json")
    sandbox.reset_stats()
    with pytest.raises(PlanError, match=r"more than --max-changes 50% allows"):
        _run("--plan", "plan.json", "--env", "local", "--partial", "--max-changes", "50%")
    assert writes_answered(sandbox) == 0


def _edited(path: Path) -> bytes:
    """plan.json with its last record's action one the schema does not allow."""
    text = path.read_bytes()
    at = text.rindex(b'"action": "create"')
    return text[:at] + b'"action": "remake"' + text[at + len(b'"action": "create"'):]


def test_a_sealed_plan_edited_in_its_last_block_is_refused_by_its_seal_before_any_write(
    project: Path, sandbox: Any
) -> None:
    write_plan_json(_plan(project, sandbox), project / "plan.json")
    (project / "plan.json").write_bytes(_edited(project / "plan.json"))
    sandbox.reset_stats()
    with pytest.raises(PlanError, match=r"changed after `loader plan` wrote it: its seal does not match"):
        _run("--plan", "plan.json", "--env", "local", "--partial")
    assert writes_answered(sandbox) == 0
    assert len(_live(sandbox)["school"]) == 3


@pytest.mark.parametrize("history", [False, True])
def test_a_plan_edited_then_sealed_again_stops_at_the_first_batch_the_schema_refuses(
    tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch, history: bool
) -> None:
    """A seal is a checksum, not a signature: one made again over an edited text holds, and the apply
    stops at the batch the schema refuses, with the messages of the plan read whole, having written
    what came before it; where the history moved since the plan was made, the plan is read whole
    first and nothing is written."""
    project = _project(tmp_path / "project", sandbox, monkeypatch, history=history)
    write_plan_json(_plan(project, sandbox), project / "plan.json")
    if history:  # an apply since the plan was made: its records' history lines may have moved
        _journaled(project / "history" / "local")
    text = _edited(project / "plan.json")
    at = text.rindex(SEAL_OPEN)
    seal = json.loads(b"{" + text[at + 1:])["seal"]
    sealed = text[:at] + text[at:].replace(seal["sha256"].encode(), hashlib.sha256(text[:at]).hexdigest().encode())
    (project / "plan.json").write_bytes(sealed)
    assert isinstance(open_saved_plan(project / "plan.json"), SealedPlan)
    sandbox.reset_stats()
    with pytest.raises(PlanError, match=r"not a valid plan:\n  blocks/1/records/2002/action: 'remake' is not one of"):
        _run("--plan", "plan.json", "--env", "local", "--partial")
    assert not any(r["code"] == "CS1" for r in _live(sandbox)["course"])
    assert (writes_answered(sandbox) == 0) is history  # without a history, the records before it were being written


def test_a_sealed_plan_is_read_as_it_is_applied_while_the_history_it_was_compared_against_has_not_moved(
    tmp_path: Path,
) -> None:
    from loader.apply.prepare import saved_plan
    from loader.history.store import History

    folder = tmp_path / "history"
    plan = make_plan(("schools", "school", [record("schools", "school", "N1", {"code": "N1", "name": "New"})]))

    def sealed(history_state: str | None) -> SealedPlan:
        write_plan_json(replace(plan, history_state=history_state), tmp_path / "plan.json")
        opened = open_saved_plan(tmp_path / "plan.json")
        assert isinstance(opened, SealedPlan)
        return opened

    def streams(saved: SealedPlan, history: History) -> bool:
        async def decide() -> bool:
            return saved_plan(saved, history)[1] is not None
        return asyncio.run(decide())

    assert streams(sealed(None), History.open(folder))  # no history yet, then or now
    _journaled(folder)
    history = History.open(folder)
    assert streams(sealed(history.state()), history)  # unchanged since
    assert not streams(sealed(None), history)  # planned before the history started
    for kind in ("update", "confirm"):
        planned = sealed(History.open(folder).state())
        _journaled(folder, kind)  # another apply since (writing, or only confirming): lines may have moved
        moved = History.open(folder)
        assert not streams(planned, moved)
        assert streams(sealed(moved.state()), moved)
