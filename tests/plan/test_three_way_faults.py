"""The three-way plan after faults: a record an interrupted apply wrote without journaling is the
loader's (adopted, never "the history is behind"), but only the fields that apply wrote move to
live: a platform edit of another field of the same record stays kept.

`python -m loader` in child processes against a sandbox losing every answer, the apply killed
with SIGKILL after its write landed and before it could journal it."""

from __future__ import annotations

from pathlib import Path

from helpers.fault_project import BEHIND, fault_project, row_of

from loader.plan.model import Action
from loader.plan.plan_file import read_plan_json
from loader.sandbox.server import FaultOptions


def test_a_kept_edit_stays_kept_on_a_record_an_interrupted_apply_wrote_without_journaling(tmp_path: Path) -> None:
    with fault_project(tmp_path, concurrency=1) as project:
        project.sheet({"K0": ("School 0", "Arts"), "K1": ("School 1", "Arts")})
        assert project.apply()[0] == 0
        project.edit("K1", {"name": "Renamed by staff"})
        project.sheet({"K0": ("School 0", "Arts"), "K1": ("School 1", "Science")})
        project.faults(FaultOptions(lost_rate=1.0))
        assert project.apply_killed(at_write=1, settle_s=0.05), "the kill must land while the write is retried"
        project.faults()
        assert row_of(project.live()["K1"]) == ("Renamed by staff", "Science"), "the killed apply's write landed"

        code, err = project.plan()
        assert code == 0 and BEHIND not in err, err
        (k1,) = (r for r in read_plan_json(tmp_path / "plan.json").records() if r.key == ("K1",))
        assert k1.action is Action.UNCHANGED, k1.payload
        assert [f.field for f in k1.kept] == ["name"]
        assert "custom_attributes.Faculty" in k1.confirmed

        code, err = project.apply()
        assert code == 0, err
        assert row_of(project.live()["K1"]) == ("Renamed by staff", "Science")
