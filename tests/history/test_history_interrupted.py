"""An apply killed before its first journal line, its first write landed and its answer lost: its
journal (a header alone) is kept when folded, so the write is the loader's (adopted), never a
permanent "the history is behind".

`python -m loader` in child processes against a sandbox losing every answer, killed with SIGKILL
while the write is retried."""

from __future__ import annotations

from pathlib import Path

from helpers.fault_project import BEHIND, fault_project, row_of

from loader.history.journal_reading import read_journal
from loader.plan.model import Action
from loader.plan.plan_file import read_plan_json
from loader.sandbox.server import FaultOptions


def test_an_apply_killed_before_its_first_journal_line_is_adopted_not_behind(tmp_path: Path) -> None:
    with fault_project(tmp_path, concurrency=1) as project:
        project.sheet({"K0": ("School 0", "Arts"), "K1": ("School 1", "Arts")})
        assert project.apply()[0] == 0
        project.sheet({"K0": ("School 0", "Arts"), "K1": ("School 1", "Science")})
        project.faults(FaultOptions(lost_rate=1.0))
        assert project.apply_killed(at_write=1, settle_s=0.05), "the kill must land while the write is retried"
        project.faults()
        assert row_of(project.live()["K1"]) == ("School 1", "Science"), "the killed apply's write landed"
        journals = tmp_path / "history" / "local" / "journal"
        (leftover,) = journals.glob("*.open.jsonl")
        assert read_journal(leftover).entries == (), "killed before its first journal line"

        code, err = project.plan()
        assert code == 0 and BEHIND not in err, err
        assert [r.action for r in read_plan_json(tmp_path / "plan.json").records()] == [Action.UNCHANGED] * 2
        assert (journals / leftover.name.replace(".open.jsonl", ".jsonl")).exists(), "its journal is kept"
        assert len(project.history().interrupted_applies) == 1

        code, err = project.apply()
        assert code == 0 and BEHIND not in err, err
        code, err = project.plan()
        assert code == 0 and BEHIND not in err, err
