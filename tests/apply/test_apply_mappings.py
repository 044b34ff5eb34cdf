"""`loader apply MAPPING...` end to end through `loader.cli.main`, on the built-in sandbox seeded
from the samples (a copy of the repository's mappings and samples in a temporary directory)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest

from loader.cli import main
from loader.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(REPO / "mappings", tmp_path / "mappings")
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _mappings(project: Path) -> list[str]:
    return sorted(str(p.relative_to(project)) for p in (project / "mappings").glob("*.yaml"))


def test_apply_without_yes_refuses_when_stdin_is_not_a_terminal(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with open("/dev/null", encoding="utf-8") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        assert main(["apply", *_mappings(project)]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "stdin is not a terminal" in err and "--yes" in err
    assert main(["plan", *_mappings(project), "--detailed-exitcode"]) == EXIT_CHANGES


def test_apply_with_yes_converges_and_a_second_plan_shows_no_changes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["apply", *_mappings(project), "--yes", "--results", "results.xlsx", "--results", "results.json"]) == 0
    out = capsys.readouterr().out
    assert "Plan:" in out and "Applied to sandbox" in out
    data = json.loads((project / "results.json").read_text(encoding="utf-8"))
    assert data["ok"] and data["totals"]["created"] > 0 and data["totals"]["failed"] == 0
    workbook = openpyxl.load_workbook(project / "results.xlsx")
    statuses = {
        cell.value for sheet in workbook.worksheets[1:] for row in sheet.iter_rows(min_row=2) for cell in row[-4:-3]
    }  # after the summary, each sheet's outcome columns end: status, id, message, block
    assert {"created", "unchanged"} <= statuses
    assert main(["plan", *_mappings(project), "--detailed-exitcode"]) == EXIT_OK
    assert main(["apply", *_mappings(project)]) == EXIT_OK  # nothing to apply: no question asked
    assert "Nothing to apply" in capsys.readouterr().out


def test_the_installed_command_applies_in_a_subprocess(project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "loader", "apply", *_mappings(project), "--yes", "--max-changes", "100%"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Applied to sandbox" in done.stdout


def test_a_plan_written_by_loader_plan_applies_with_apply_plan(project: Path) -> None:
    assert main(["plan", *_mappings(project), "--out", "plan.json"]) == EXIT_OK
    assert main(["apply", "--plan", "plan.json", "--results", "results.json"]) == EXIT_OK
    data = json.loads((project / "results.json").read_text(encoding="utf-8"))
    assert data["ok"] and data["totals"]["created"] > 0
    assert main(["plan", *_mappings(project), "--detailed-exitcode"]) == EXIT_OK


def test_a_plan_file_edited_out_of_shape_is_refused_by_the_schema(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", *_mappings(project), "--out", "plan.json"]) == EXIT_OK
    data = json.loads((project / "plan.json").read_text(encoding="utf-8"))
    data["blocks"][0]["records"][0]["action"] = "delete"
    (project / "plan.json").write_text(json.dumps(data), encoding="utf-8")
    capsys.readouterr()
    assert main(["apply", "--plan", "plan.json"]) == EXIT_ERROR
    assert "not a valid plan" in capsys.readouterr().err


def test_a_plan_is_refused_when_the_entity_profile_changed_since(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", *_mappings(project), "--out", "plan.json"]) == EXIT_OK
    (project / "loader.yaml").write_text(
        'profile:\n  entities:\n    course: {update: {method: PUT, path: "/institution/catalogue/courses/{id}"}}\n',
        encoding="utf-8",
    )
    capsys.readouterr()
    assert main(["apply", "--plan", "plan.json", "--yes"]) == EXIT_ERROR
    assert "entity profile changed since the plan" in capsys.readouterr().err
    (project / "loader.yaml").unlink()
    assert main(["apply", "--plan", "plan.json", "--yes"]) == EXIT_OK
