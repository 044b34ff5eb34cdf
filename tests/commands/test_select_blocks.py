"""`--select BLOCK`: plan, validate and apply some of the mapping files' blocks, against a real sandbox."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.api import writes_answered
from helpers.mapping import write_workbook
from helpers.project import SCHOOLS_MAPPING, SCHOOLS_SEED, schools_project

from loader import library
from loader.cli import main
from loader.errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from loader.plan.model import Action, Plan
from loader.plan.plan_file import read_plan_json
from loader.sandbox.server import SandboxOptions, serve_in_thread

MED = "00000000-0000-4000-8000-000000000003"
SEED = {"institution-a": {"schools": [*SCHOOLS_SEED["institution-a"]["schools"],
                                      {"id": MED, "code": "MED", "name": "Medicine"}]}}  # medicine.yaml's
COURSES = """version: 1
source: courses.xlsx
entities:
  courses:
    entity: course
    sheet: Courses
    key: [code]
    fields: {code: Code, name: Name, parent: {ref: school, column: School}}
"""
MEDICINE = (SCHOOLS_MAPPING.replace("schools.xlsx", "medicine.xlsx").replace("  schools:", "  medical_schools:")
            .replace("    key: [code]", "    key: [code]\n    on_dropped: {set: {name: Closed}}"))
FILES = ["schools.yaml", "courses.yaml", "medicine.yaml"]



@pytest.fixture
def sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions(seed=SEED)) as running:
        yield running


@pytest.fixture
def project(tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Three mapping files: schools.yaml (one update, one unchanged, one create), courses.yaml
    (courses of live schools) and medicine.yaml (an update of the live school MED)."""
    root = schools_project(tmp_path, sandbox, monkeypatch)
    (root / "courses.yaml").write_text(COURSES, encoding="utf-8")
    (root / "medicine.yaml").write_text(MEDICINE, encoding="utf-8")
    write_workbook(root / "courses.xlsx", {"Courses": [
        ("Code", "Name", "School"), ("BSC", "Bachelor of Science", "SCI"), ("BMED", "Bachelor of Medicine", "MED")]})
    write_workbook(root / "medicine.xlsx", {"Schools": [("Code", "Name"), ("MED", "School of Medicine")]})
    return root


def _plan(*words: str) -> tuple[int, Plan]:
    code = main(["plan", *FILES, "--env", "local", "--out", "plan.json", *words])
    return code, read_plan_json(Path("plan.json"))



def test_a_selected_plan_plans_the_named_blocks_alone(project: Path) -> None:
    code, plan = _plan("--select", "courses", "--select", "schools.yaml:schools")
    assert code == EXIT_OK
    assert [b.name for b in plan.blocks] == ["schools", "courses"]
    code, plan = _plan("--select", "courses")
    assert [b.name for b in plan.blocks] == ["courses"]
    assert {r.key for r in plan.records()} == {("BSC",), ("BMED",)}  # both schools live: resolved as usual
    assert not plan.has_errors


def test_live_records_of_blocks_not_selected_are_not_called_not_managed_here(project: Path) -> None:
    assert _plan()[1].blocks[0].not_in_source_records == ()  # MED is medical_schools'
    code, plan = _plan("--select", "schools")
    assert code == EXIT_OK
    assert [b.name for b in plan.blocks] == ["schools"]
    assert plan.blocks[0].not_in_source_records == ()  # MED may be medical_schools': not "not managed here"


def test_a_reference_to_a_create_of_a_block_not_selected_says_which_block_to_select(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_workbook(project / "courses.xlsx", {"Courses": [("Code", "Name", "School"), ("LLB", "Laws", "LAW")]})
    # LAW is created by the schools block
    assert _plan()[0] == EXIT_OK  # planned together, the course waits for its school
    code, plan = _plan("--select", "courses")
    assert code == EXIT_ERROR
    [error] = plan.errors()
    assert error.code == "unresolved-reference"
    assert "if one of the blocks schools, medical_schools creates it, select it too" in error.message
    code, plan = _plan("--select", "courses", "--select", "schools")
    assert code == EXIT_OK
    assert [r.action for r in plan.blocks[1].records] == [Action.CREATE]


def test_a_name_that_selects_no_block_is_a_usage_error_listing_the_blocks(
    project: Path, sandbox: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    sandbox.reset_stats()
    assert main(["plan", *FILES, "--env", "local", "--select", "course"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--select course: no block of the mapping files given is named so (did you mean 'courses'?)" in err
    assert "select one of: schools, courses, medical_schools" in err
    assert main(["plan", "schools.yaml", "--env", "local", "--select", "medicine:medical_schools"]) == EXIT_USAGE
    assert main(["validate", "schools.yaml", "--select", "nothing"]) == EXIT_USAGE
    assert main(["apply", "--plan", "plan.json", "--select", "schools"]) == EXIT_USAGE
    assert sandbox.stats()["total"] == 0  # refused before any request


def test_validate_checks_the_selected_blocks_alone(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", *FILES, "--select", "medicine:medical_schools"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "medical_schools (school)" in out
    assert "courses (course)" not in out and "schools.yaml schools" not in out


def test_apply_expect_digest_applies_the_narrowed_plan_reviewed(project: Path, sandbox: Any,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", *FILES, "--env", "local", "--select", "schools", "--report", "plan.md"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "--select schools" in out  # the apply the closing line proposes keeps the selection
    found = re.search(r"Plan digest: `(sha256:[0-9a-f]{64})`", (project / "plan.md").read_text(encoding="utf-8"))
    assert found
    sandbox.reset_stats()
    whole = ["apply", *FILES, "--env", "local", "--yes", "--expect-digest", found[1]]
    assert main(whole) == EXIT_ERROR  # every block planned: not the plan reviewed
    assert writes_answered(sandbox) == 0
    assert main([*whole, "--select", "schools"]) == EXIT_OK
    assert writes_answered(sandbox) == 2  # SCI updated, LAW created; no course


def test_a_selected_plan_neither_drops_nor_retires_the_records_of_blocks_not_selected(project: Path) -> None:
    assert main(["apply", *FILES, "--env", "local", "--yes"]) == EXIT_OK
    write_workbook(project / "medicine.xlsx", {"Schools": [("Code", "Name"), ("DEN", "Dentistry")]})  # MED dropped
    code, plan = _plan("--select", "schools", "--select", "courses")
    assert code == EXIT_OK
    assert [b.name for b in plan.blocks] == ["schools", "courses"]
    assert all(not b.dropped and not b.not_in_source_records for b in plan.blocks)
    assert not plan.has_changes
    [medical] = [b for b in _plan()[1].blocks if b.name == "medical_schools"]
    assert [d.key for d in medical.dropped] == [("MED",)]  # planned whole, MED is dropped and retired
    assert any(r.action == Action.UPDATE and r.key == ("MED",) for r in medical.records)


def test_the_python_api_plans_the_blocks_selected(project: Path) -> None:
    plan = library.plan(FILES, env="local", select=["courses"])
    assert [b.name for b in plan.blocks] == ["courses"]
