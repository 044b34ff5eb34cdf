"""A revert of an apply killed between a write that landed and its journal line names that write
("written by this apply, not journaled: changed since? check by hand"): what the record held before
is not known, so it is left to a person, never silently left changed.

`python -m loader` in a child process against a sandbox losing every answer, killed with SIGKILL
while it retried the write that had landed."""

from __future__ import annotations

from pathlib import Path

from helpers.fault_project import fault_project, row_of

from loader.plan.plan_file import read_plan_json
from loader.plan.revert import UNJOURNALED
from loader.sandbox.server import FaultOptions


def test_a_revert_of_a_killed_apply_names_its_unjournaled_write(tmp_path: Path) -> None:
    with fault_project(tmp_path, concurrency=1) as project:
        project.sheet({"K0": ("School 0", "Arts"), "K1": ("School 1", "Arts")})
        assert project.apply()[0] == 0
        project.sheet({"K0": ("School 0", "Arts"), "K1": ("School 1", "Science")})
        project.faults(FaultOptions(lost_rate=1.0))
        assert project.apply_killed(at_write=1, settle_s=0.05), "the kill must land while the write is retried"
        project.faults()
        assert row_of(project.live()["K1"]) == ("School 1", "Science"), "the killed apply's write landed"
        assert project.plan()[0] == 0  # folds the killed apply's journal
        killed = sorted((tmp_path / "history" / "local" / "journal").glob("*.jsonl"))[-1].name.split(".")[0]
        code, err = project.run("revert", "--apply", killed, "--out", "revert.json")
        assert code == 0, err
        notes = [f.message for f in read_plan_json(tmp_path / "revert.json").findings]
        k1_id = project.live()["K1"]["id"]
        assert f"school K1 (id {k1_id}): {UNJOURNALED}" in notes, notes
        assert not [n for n in notes if "K0" in n]  # not written by it
