"""An apply killed with SIGKILL keeps its history: every write it had journaled happened, and the
next command folds the leftover journal and takes the writes that committed after the last journal
line (the loader's own user, a newer time) as the loader's, never as platform edits.

`python -m loader apply ... --yes` runs in a child process against a sandbox in another process
with a file database and some latency, as in test_apply_kill."""

from __future__ import annotations

import asyncio
import json
import random
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.apply import client_for
from helpers.kill import start_loader, wait_for_writes, write_project

from loader.history.digests import expand_id
from loader.history.journal_reading import read_journal
from loader.history.store import History
from loader.plan.model import Action
from loader.plan.plan_file import read_plan_json
from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_subprocess

SCHOOLS = 30
COURSES = 300
ENTITIES = ("school", "course")



@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Any]:
    options = SandboxOptions(data=str(tmp_path / "service.sqlite3"), faults=FaultOptions(latency_ms=15, jitter_ms=10))
    with serve_in_subprocess(options) as running:
        yield running


def _live(sandbox: Any) -> dict[str, dict[str, dict[str, Any]]]:
    async def go() -> dict[str, list[dict[str, Any]]]:
        async with client_for(sandbox) as client:
            return await client.fetch_collections(list(ENTITIES))

    return {entity: {r["id"]: r for r in records} for entity, records in asyncio.run(go()).items()}


def _kill_mid_apply(root: Path, sandbox: Any, seed: int) -> None:
    child = start_loader(root, sandbox, "apply", "curriculum.yaml", "--yes")
    # A random point measured in writes, not seconds, so it lands mid-apply on a fast or a slow machine.
    wait_for_writes(sandbox, random.Random(seed).randint(SCHOOLS // 2, (SCHOOLS + COURSES) * 3 // 4))
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL


def _killed_and_checked(root: Path, sandbox: Any, seed: int) -> dict[str, set[str]]:
    """Kill an apply mid-way and check its leftover journal against the service: every journaled
    write happened, as journaled. The ids of the records it committed but never journaled."""
    write_project(root, sandbox, SCHOOLS, COURSES)
    sandbox.reset_stats()
    _kill_mid_apply(root, sandbox, seed)
    folder = root / "history" / "local"
    (leftover,) = (folder / "journal").glob("*.open.jsonl")
    journal = read_journal(leftover)
    assert journal.counts is None, "a killed apply never wrote its end line"
    live = _live(sandbox)
    assert len(live["course"]) < COURSES, "the kill must land before the apply finished"
    digester = History.open(folder, fold_leftovers=False).digester
    journaled: dict[str, set[str]] = {entity: set() for entity in ENTITIES}
    for entry in journal.entries:
        assert entry.kind in ("create", "lost", "adopt"), entry
        if entry.kind == "lost":
            continue
        record_id = expand_id(entry.live_id or "")
        record = live[entry.entity][record_id]
        key = tuple(json.loads(entry.key))
        assert (record["code"],) == key
        for name in ("code", "name"):
            assert entry.fields[name].written == digester.value(entry.entity, key, name, record[name])
        assert entry.updated == (record["metadata"]["updated"]["time"], record["metadata"]["updated"]["user"]["id"])
        journaled[entry.entity].add(record_id)
    assert journaled["school"], "the kill must land after some writes were journaled"
    return {entity: set(live[entity]) - journaled[entity] for entity in ENTITIES}


def _next_plan_takes_them_as_the_loaders(root: Path, sandbox: Any) -> None:
    """The next command folds the leftover journal and sees the committed writes as the loader's:
    no platform edit, nothing to do for any record that is live."""
    live = _live(sandbox)
    plan_run = start_loader(root, sandbox, "plan", "curriculum.yaml", "--out", "plan.json")
    _, err = plan_run.communicate(timeout=120)
    assert plan_run.returncode == 0, err
    assert list((root / "history" / "local" / "journal").glob("*.open.jsonl")) == []
    plan = read_plan_json(root / "plan.json")
    live_codes = {r["code"] for entity in ENTITIES for r in live[entity].values()}
    for planned in plan.records():
        assert not planned.kept and not planned.conflicts, f"{planned.ref}: reported as a platform edit"
        if planned.key[0] in live_codes:
            assert planned.action is Action.UNCHANGED and not planned.status_path, f"{planned.ref}: {planned.action}"
        else:
            assert planned.action is Action.CREATE


def _rerun(root: Path, sandbox: Any) -> None:
    rerun = start_loader(root, sandbox, "apply", "curriculum.yaml", "--yes")
    _, err = rerun.communicate(timeout=180)
    assert rerun.returncode == 0, err
    final = _live(sandbox)
    assert len(final["course"]) == COURSES and len(final["school"]) == SCHOOLS


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("seed", [1, 2])
def test_a_killed_apply_keeps_every_journaled_write_and_the_next_command_takes_the_unjournaled_as_its_own(
    tmp_path: Path, sandbox: Any, seed: int
) -> None:
    _killed_and_checked(tmp_path, sandbox, seed)
    _next_plan_takes_them_as_the_loaders(tmp_path, sandbox)
    _rerun(tmp_path, sandbox)
    check = start_loader(tmp_path, sandbox, "plan", "curriculum.yaml", "--detailed-exitcode")
    _, err = check.communicate(timeout=120)
    assert check.returncode == 0, err


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_unjournaled_writes_of_a_killed_apply_are_adopted_into_the_history(tmp_path: Path, sandbox: Any) -> None:
    unjournaled = _killed_and_checked(tmp_path, sandbox, 3)
    assert any(unjournaled.values()), "the kill must land while writes were in flight"
    _next_plan_takes_them_as_the_loaders(tmp_path, sandbox)
    _rerun(tmp_path, sandbox)
    history = History.open(tmp_path / "history" / "local")
    for entity in ENTITIES:
        for record_id, record in _live(sandbox)[entity].items():
            line = history.line(entity, (record["code"],))
            assert line is not None and expand_id(line.live_id) == record_id, (
                f"{entity} {record['code']} has no history line"
                + (" (committed, unjournaled when killed)" if record_id in unjournaled[entity] else "")
            )
            assert set(line.fields) >= {"code", "name"}
