"""The `xcri-cap-1.2` pack: a fresh project copies it with `loader init --pack` and loads Cetis's
generic postgraduate sample end to end (plan, apply, plan empty) with no mapping line written by
hand; `init --pack` refuses what it would overwrite, and names the packs it has."""

from __future__ import annotations

from pathlib import Path

import pytest

from loader.cli import main
from loader.plan.model import Action
from loader.plan.plan_file import read_plan_json

MAPPING = "mappings/xcri-cap.yaml"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loader.yaml").write_text("{}\n", encoding="utf-8")  # a project of its own: an empty sandbox
    return tmp_path


def test_a_fresh_project_loads_the_xcri_sample_and_then_has_nothing_to_do(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "--pack", "xcri-cap-1.2"]) == 0, capsys.readouterr()
    assert "It validates" in capsys.readouterr().out
    assert main(["test"]) == 0  # the pack's own cases, in the project it was copied into
    assert "2 cases in 2 test files: all passed" in capsys.readouterr().out
    assert "Licence: Open Government Licence v1.0" in (project / "samples/xcri-cap/NOTICE.md").read_text("utf-8")
    assert main(["plan", MAPPING, "--out", "plan.json"]) == 0, capsys.readouterr()
    plan = read_plan_json(project / "plan.json")
    created = {(r.entity, r.key): r.payload for r in plan.records() if r.action == Action.CREATE}
    assert set(created) == {("school", ("10099999",)), ("course", ("PG064",)), ("program", ("PG064-2015-09-01",))}
    course, presentation = created[("course", ("PG064",))], created[("program", ("PG064-2015-09-01",))]
    assert course["name"] == "Business and Marketing"
    assert course["custom_attributes"] == {
        "Department": "Department of Management", "Qualification": "MBA Business and Marketing", "Credit": "180",
        "Credit Level": "M", "URL": "http://www.poppleton.ac.uk/postgraduate/mba"}
    assert presentation["custom_attributes"] == {
        "Start": "2015-09-01", "End": "2017-07-01", "Duration": "P2Y", "Study Mode": "Part time",
        "Attendance Mode": "Campus", "Attendance Pattern": "Daytime", "Places": "50", "Cost": "GBP6,000 per stage"}
    assert main(["apply", "--plan", "plan.json"]) == 0, capsys.readouterr()
    assert main(["plan", MAPPING, "--detailed-exitcode"]) == 0, capsys.readouterr()


def test_init_pack_overwrites_nothing_unless_forced_and_names_the_packs(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "mappings").mkdir()
    (project / MAPPING).write_text("# mine\n", encoding="utf-8")
    assert main(["init", "--pack", "xcri-cap-1.2"]) == 64
    assert "already in the project: mappings/xcri-cap.yaml" in capsys.readouterr().err
    assert (project / MAPPING).read_text("utf-8") == "# mine\n"
    assert not (project / "samples").exists()  # nothing of it was written
    assert main(["init", "--pack", "xcri-cap-1.2", "--force"]) == 0
    assert "version: 1" in (project / MAPPING).read_text("utf-8")
    assert main(["init", "--pack", "xcri"]) == 64
    assert "no pack named 'xcri'" in capsys.readouterr().err
    assert main(["init"]) == 64  # neither a workbook nor a pack
    assert main(["init", "book.xlsx", "--pack", "elmo"]) == 64
