"""Kill and interrupt: `python -m loader apply ... --yes` in a child process against a sandbox in
another process with a file database. SIGKILL at a random point, then a re-run converges with no
duplicates; SIGINT stops dispatching, writes results and exits 130."""

from __future__ import annotations

import asyncio
import json
import random
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.apply import client_for, duplicates
from helpers.kill import start_loader, wait_for_writes, write_project

from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_subprocess

SCHOOLS = 40
COURSES = 400



@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Any]:
    options = SandboxOptions(data=str(tmp_path / "service.sqlite3"), faults=FaultOptions(latency_ms=15, jitter_ms=10))
    with serve_in_subprocess(options) as running:
        yield running


def _live(sandbox: Any) -> dict[str, list[dict[str, Any]]]:
    async def go() -> dict[str, list[dict[str, Any]]]:
        async with client_for(sandbox) as client:
            return await client.fetch_collections(["school", "course"])

    return asyncio.run(go())


def _assert_converged(sandbox: Any) -> None:
    live = _live(sandbox)
    assert duplicates(live["school"]) == [] and duplicates(live["course"]) == []
    assert sorted(s["code"] for s in live["school"]) == sorted(f"K{i}" for i in range(SCHOOLS))
    assert sorted(c["code"] for c in live["course"]) == sorted(f"KC{i}" for i in range(COURSES))
    school_ids = {s["code"]: s["id"] for s in live["school"]}
    for course in live["course"]:
        assert course["parent"] == {"id": school_ids[f"K{int(course['code'][2:]) % SCHOOLS}"]}


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_apply_killed_at_a_random_point_converges_on_rerun_without_duplicates(
    tmp_path: Path, sandbox: Any, seed: int
) -> None:
    write_project(tmp_path, sandbox, SCHOOLS, COURSES)
    sandbox.reset_stats()
    child = start_loader(tmp_path, sandbox, "apply", "curriculum.yaml", "--yes")
    # A random point measured in writes, not seconds, so it lands mid-apply on a fast or a slow machine.
    wait_for_writes(sandbox, random.Random(seed).randint(1, (SCHOOLS + COURSES) * 3 // 4))
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    written = len(_live(sandbox)["course"])
    assert written < COURSES, "the kill must land before the apply finished"

    rerun = start_loader(tmp_path, sandbox, "apply", "curriculum.yaml", "--yes")
    _, err = rerun.communicate(timeout=180)
    assert rerun.returncode == 0, err
    _assert_converged(sandbox)
    check = start_loader(tmp_path, sandbox, "plan", "curriculum.yaml", "--detailed-exitcode")
    check.communicate(timeout=120)
    assert check.returncode == 0


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_stops_dispatching_writes_results_and_exits_130(
    tmp_path: Path, sandbox: Any, stop_signal: signal.Signals
) -> None:
    write_project(tmp_path, sandbox, SCHOOLS, COURSES)
    sandbox.reset_stats()
    child = start_loader(tmp_path, sandbox, "apply", "curriculum.yaml", "--yes", "--results", "results.json")
    wait_for_writes(sandbox, 60)
    child.send_signal(stop_signal)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert "interrupted" in err
    data = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert data["interrupted"] is True
    done = {r["ref"] for r in data["records"] if r["outcome"] == "created"}
    skipped = [r for r in data["records"] if r["outcome"] == "skipped"]
    assert skipped and all("interrupted" in r["message"] or "depends on" in r["message"] for r in skipped)
    live = _live(sandbox)
    # Every request in flight finished and was recorded: the results name exactly what exists.
    assert len(done) == len(live["school"]) + len(live["course"])

    rerun = start_loader(tmp_path, sandbox, "apply", "curriculum.yaml", "--yes")
    _, err = rerun.communicate(timeout=180)
    assert rerun.returncode == 0, err
    _assert_converged(sandbox)
