"""An update whose every answer was lost, found landed by its look-up, is journaled with the
record's `updated` stamp: the next plan is not refused as "the history is behind".

`python -m loader` in child processes against a sandbox losing every answer."""

from __future__ import annotations

from pathlib import Path

from helpers.fault_project import BEHIND, fault_project, row_of

from loader.history.journal_reading import read_journal
from loader.plan.model import Action
from loader.plan.plan_file import read_plan_json
from loader.sandbox.server import FaultOptions


def test_an_update_found_landed_after_its_answers_were_lost_leaves_the_history_whole(tmp_path: Path) -> None:
    with fault_project(tmp_path, concurrency=1) as project:
        project.sheet({"K0": ("School 0", "Arts")})
        assert project.apply()[0] == 0
        project.sheet({"K0": ("Renamed 0", "Arts")})
        project.faults(FaultOptions(lost_rate=1.0))
        code, err = project.apply()
        assert code == 0, err
        project.faults()
        live = project.live()["K0"]
        assert row_of(live) == ("Renamed 0", "Arts")
        last = sorted((tmp_path / "history" / "local" / "journal").glob("*.jsonl"))[-1]
        (update,) = (e for e in read_journal(last).entries if e.kind == "update")
        stamp = live["metadata"]["updated"]
        assert update.updated == (stamp["time"], stamp["user"]["id"])

        code, err = project.plan()
        assert code == 0 and BEHIND not in err, err
        assert [r.action for r in read_plan_json(tmp_path / "plan.json").records()] == [Action.UNCHANGED]
