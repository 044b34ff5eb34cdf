"""Kill and interrupt: `python -m loader apply ... --yes` in a child process against a sandbox in
another process with a file database. SIGKILL at a random point, then a re-run converges with no
duplicates; SIGINT stops dispatching, writes results and exits 130."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from helpers.apply import client_for, duplicates, loader_yaml_for

from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_subprocess

SCHOOLS = 40
COURSES = 400

MAPPING = """\
version: 1
source: source.xlsx
entities:
  schools:
    entity: school
    sheet: Schools
    key: [code]
    fields:
      code: School Code
      name: School Name
  courses:
    entity: course
    sheet: Courses
    key: [code]
    fields:
      code: Course Code
      name: Course Title
      parent: {ref: school, column: School Code}
"""


def _write_project(root: Path, sandbox: Any) -> None:
    workbook = openpyxl.Workbook()
    schools = workbook.active
    schools.title = "Schools"
    schools.append(["School Code", "School Name"])
    for i in range(SCHOOLS):
        schools.append([f"K{i}", f"School {i}"])
    courses = workbook.create_sheet("Courses")
    courses.append(["Course Code", "Course Title", "School Code"])
    for i in range(COURSES):
        courses.append([f"KC{i}", f"Course {i}", f"K{i % SCHOOLS}"])
    workbook.save(root / "source.xlsx")
    (root / "curriculum.yaml").write_text(MAPPING, encoding="utf-8")
    (root / "loader.yaml").write_text(
        loader_yaml_for(sandbox, "KILL_TEST_SECRET", top="default_environment: local\nconcurrency: 8\n"),
        encoding="utf-8",
    )


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Any]:
    options = SandboxOptions(data=str(tmp_path / "service.sqlite3"), faults=FaultOptions(latency_ms=15, jitter_ms=10))
    with serve_in_subprocess(options) as running:
        yield running


def _loader(root: Path, sandbox: Any, *argv: str) -> subprocess.Popen[str]:
    env = {**os.environ, "KILL_TEST_SECRET": sandbox.client_secret}
    return subprocess.Popen(
        [sys.executable, "-m", "loader", *argv], cwd=root, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )


def _live(sandbox: Any) -> dict[str, list[dict[str, Any]]]:
    async def go() -> dict[str, list[dict[str, Any]]]:
        async with client_for(sandbox) as client:
            return await client.fetch_collections(["school", "course"])

    return asyncio.run(go())


def _wait_for_writes(sandbox: Any, at_least: int, limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        posts = sum(n for route, n in sandbox.stats()["requests"].items() if route.startswith("POST /institution"))
        if posts >= at_least:
            return
        time.sleep(0.005)
    raise AssertionError("the apply never started writing")


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
    _write_project(tmp_path, sandbox)
    sandbox.reset_stats()
    child = _loader(tmp_path, sandbox, "apply", "curriculum.yaml", "--yes")
    # A random point measured in writes, not seconds, so it lands mid-apply on a fast or a slow machine.
    _wait_for_writes(sandbox, random.Random(seed).randint(1, (SCHOOLS + COURSES) * 3 // 4))
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    written = len(_live(sandbox)["course"])
    assert written < COURSES, "the kill must land before the apply finished"

    rerun = _loader(tmp_path, sandbox, "apply", "curriculum.yaml", "--yes")
    _, err = rerun.communicate(timeout=180)
    assert rerun.returncode == 0, err
    _assert_converged(sandbox)
    check = _loader(tmp_path, sandbox, "plan", "curriculum.yaml", "--detailed-exitcode")
    check.communicate(timeout=120)
    assert check.returncode == 0


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_stops_dispatching_writes_results_and_exits_130(
    tmp_path: Path, sandbox: Any, stop_signal: signal.Signals
) -> None:
    _write_project(tmp_path, sandbox)
    sandbox.reset_stats()
    child = _loader(tmp_path, sandbox, "apply", "curriculum.yaml", "--yes", "--results", "results.json")
    _wait_for_writes(sandbox, 60)
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

    rerun = _loader(tmp_path, sandbox, "apply", "curriculum.yaml", "--yes")
    _, err = rerun.communicate(timeout=180)
    assert rerun.returncode == 0, err
    _assert_converged(sandbox)
