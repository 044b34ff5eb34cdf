"""Error checks at apply: a record-level one blocks its records (`--partial` applies the rest); a
set-level one blocks its whole block, and `--partial` never bypasses it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.project import SCHOOLS_MAPPING, SCHOOLS_SEED, schools_project, write_schools

from loader.cli import main
from loader.sandbox.server import SandboxOptions, serve_in_thread


@pytest.fixture
def sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions(seed=SCHOOLS_SEED)) as running:
        yield running


@pytest.fixture
def project(tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = schools_project(tmp_path, sandbox, monkeypatch)
    write_schools(project / "schools.xlsx", [("SCI", "School of Science"), ("ENG", "Engineering"), ("LAW", "Law"),
                                             ("L4W", "Law again")])
    return project


def _with_check(project: Path, check: str) -> None:
    (project / "schools.yaml").write_text(SCHOOLS_MAPPING + f"    checks:\n      - {check}\n", encoding="utf-8")


def _plan(capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    main(["plan", "schools.yaml", "--env", "local"])
    return capsys.readouterr().out


def test_a_record_level_error_check_blocks_its_record_and_partial_applies_the_rest(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _with_check(project, '{expect: pattern, field: code, regex: "[A-Z]{3}", severity: error}')
    assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == 1
    assert "check pattern code fails for school L4W" in capsys.readouterr().out
    assert main(["apply", "schools.yaml", "--env", "local", "--yes", "--partial"]) == 0
    out = _plan(capsys)
    assert "✗ blocked L4W" in out
    assert "+ create" not in out and "~ update" not in out  # LAW created, SCI updated


def test_a_set_level_error_check_blocks_the_block_even_with_partial(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _with_check(project, "{expect: rows, min: 10, severity: error}")
    assert main(["apply", "schools.yaml", "--env", "local", "--yes", "--partial"]) == 0
    _with_check(project, "{expect: rows, min: 1}")
    out = _plan(capsys)
    assert "+ create LAW" in out and "~ update SCI" in out  # nothing of the block was written


def test_a_failing_check_shows_in_every_output(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _with_check(project, '{expect: pattern, field: code, regex: "[A-Z]{3}", severity: error}')
    main(["plan", "schools.yaml", "--env", "local", "--report", "plan.md", "--html", "plan.html"])
    said = "check pattern code fails for school L4W: does not match [A-Z]{3}, got 'L4W'"
    assert said in capsys.readouterr().out
    assert said.replace("[", "\\[").replace("]", "\\]") in (project / "plan.md").read_text(encoding="utf-8")
    assert "check pattern code fails for school L4W" in (project / "plan.html").read_text(encoding="utf-8")
    main(["plan", "schools.yaml", "--env", "local", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert [f["message"] for f in document["findings"] if f["code"] == "check-pattern"] == [said]


def test_an_every_error_blocks_the_record_it_names_and_partial_applies_the_rest(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "courses.csv").write_text("Code,Title,School\nBSC,Science,SCI\nBENG,Engineering,ENG\n",
                                         encoding="utf-8")
    (project / "schools.yaml").write_text(SCHOOLS_MAPPING + """    checks:
      - {expect: every, has: course, via: parent, severity: error}
  courses:
    entity: course
    source: courses.csv
    key: [code]
    fields:
      code: Code
      name: Title
      parent: {ref: school, column: School}
""", encoding="utf-8")
    assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == 1  # refused: the plan has errors
    assert "✗ blocked LAW  row 4  check every record has a course (via parent) fails for school LAW" \
        in capsys.readouterr().out  # the record left out, as a record-level check leaves its records
    assert main(["apply", "schools.yaml", "--env", "local", "--yes", "--partial"]) == 0
    out = _plan(capsys)
    assert "✗ blocked LAW" in out and "✗ blocked L4W" in out  # neither has a course: never written
    assert "~ update" not in out and "create BSC" not in out  # SCI updated, the courses created
