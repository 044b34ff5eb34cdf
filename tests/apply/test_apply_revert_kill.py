"""A revert's apply killed midway (SIGKILL, a real process) still leaves the skip decisions of what
it reverted, so the next apply of the unchanged sheet does not redo the reverted changes; and an
apply that ends keeps only the decisions of the records it updated."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from helpers.fault_project import fault_project

from loader.history.decisions import read_decisions

SCHOOLS = 12


def test_a_revert_killed_midway_leaves_its_skips_and_the_next_apply_does_not_redo_them(tmp_path: Path) -> None:
    with fault_project(tmp_path, concurrency=1) as project:
        project.sheet({f"K{i:02d}": (f"First {i}", "Arts") for i in range(SCHOOLS)})
        assert project.apply()[0] == 0
        project.sheet({f"K{i:02d}": (f"Second {i}", "Arts") for i in range(SCHOOLS)})
        assert project.apply()[0] == 0
        code, err = project.run("revert", "--out", "revert.json")
        assert code == 0, err
        start = project.writes()
        child = project.start("apply", "--plan", "revert.json", "--yes")
        deadline = time.monotonic() + 60
        while child.poll() is None and project.writes() < start + 3 and time.monotonic() < deadline:
            time.sleep(0.002)
        assert child.poll() is None, child.communicate()
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
        reverted = {code for code, school in project.live().items() if school["name"].startswith("First")}
        assert 0 < len(reverted) < SCHOOLS, reverted
        assert read_decisions(tmp_path / "decisions.yaml").entries  # written before the first write
        code, err = project.apply()  # the sheet still says "Second": the reverted records stay reverted
        assert code == 0, err
        live = project.live()
        assert {c for c, school in live.items() if school["name"].startswith("First")} >= reverted, err


def test_a_revert_that_ends_keeps_only_the_skips_of_what_it_updated(tmp_path: Path) -> None:
    with fault_project(tmp_path) as project:
        project.sheet({"K0": ("First", "Arts"), "K1": ("One", "Arts")})
        assert project.apply()[0] == 0
        project.sheet({"K0": ("Second", "Arts"), "K1": ("Two", "Arts")})
        assert project.apply()[0] == 0
        assert project.run("revert", "--out", "revert.json")[0] == 0
        project.edit("K1", {"name": "Staff"})  # changed since the revert was planned: the apply skips it
        code, err = project.run("apply", "--plan", "revert.json", "--yes")
        decisions = read_decisions(tmp_path / "decisions.yaml").entries
        assert {d.field for d in decisions} == {"name"} and len(decisions) == 1, (code, err, decisions)
        assert project.live()["K0"]["name"] == "First" and project.live()["K1"]["name"] == "Staff"
