"""`loader init`: a draft mapping from a workbook's headers that validates as written and plans."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from helpers.apply import loader_yaml_for
from helpers.plan import REPO, copy_samples

from loader.cli import main
from loader.errors import EXIT_OK, EXIT_USAGE
from loader.sandbox.server import SandboxOptions, serve_in_thread

UNUSUAL_HEADERS = ["Student No.", "Given name(s)", "Surname", "E-mail addr.", "D.O.B.", "Mobile", "Home campus"]


def _unusual_workbook(path: Path) -> Path:
    """A sheet as staff send it: a title row, a blank row, then headers nobody would call field names."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Intake 2027"
    sheet.append(["New applicants, intake 2027 (exported 3 Nov)"])
    sheet.append([])
    sheet.append(UNUSUAL_HEADERS)
    sheet.append(["S0001", "Ada", "Lovelace", "Ada.Lovelace@example.com ", datetime(2007, 12, 10), "0400 000 001",
                  "Albury"])
    sheet.append(["S0002", "Alan", "Turing", "alan.turing@example.com", datetime(2006, 6, 23), "0400 000 002",
                  "Online"])
    book.save(path)
    return path


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _fields(path: Path) -> dict[str, dict[str, Any]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {name: block for name, block in data["entities"].items()}


@pytest.mark.parametrize("workbook", ["curriculum", "applicants", "arrangements"])
def test_a_draft_of_each_sample_workbook_validates_as_written(
    workdir: Path, workbook: str, capsys: pytest.CaptureFixture[str]
) -> None:
    copy_samples(workdir)
    out = workdir / "drafts" / f"{workbook}.yaml"
    assert main(["init", f"samples/intake-2027/{workbook}.xlsx", "--out", str(out)]) == EXIT_OK
    assert "It validates." in capsys.readouterr().out
    first = out.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=")
    assert (out.parent / first.split("$schema=")[1]).resolve().is_file()  # the schema installed with loader
    assert main(["validate", str(out)]) == EXIT_OK


def test_the_schema_line_points_at_the_projects_own_schemas_folder_when_there_is_one(workdir: Path) -> None:
    copy_samples(workdir)
    (workdir / "schemas").mkdir()
    (workdir / "schemas" / "mapping.schema.json").write_bytes((REPO / "schemas" / "mapping.schema.json").read_bytes())
    assert main(["init", "samples/intake-2027/arrangements.xlsx", "--out", "drafts/arrangements.yaml"]) == EXIT_OK
    text = (workdir / "drafts" / "arrangements.yaml").read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=../schemas/mapping.schema.json\n")


def test_the_curriculum_draft_matches_what_the_hand_written_sample_maps(workdir: Path) -> None:
    copy_samples(workdir)
    assert main(["init", "samples/intake-2027/curriculum.xlsx", "--out", "draft.yaml"]) == EXIT_OK
    drafted = _fields(workdir / "draft.yaml")
    written = _fields(REPO / "mappings" / "curriculum.yaml")
    assert set(drafted) == set(written)
    for name, block in written.items():
        assert drafted[name]["entity"] == block["entity"] and drafted[name]["key"] == block["key"]
        for field, spec in block["fields"].items():
            if field == "custom_attributes":
                continue
            column = spec if isinstance(spec, str) else spec["column"]
            assert drafted[name]["fields"][field]["column"] == column, (name, field)
            if isinstance(spec, dict) and "ref" in spec:
                assert drafted[name]["fields"][field]["ref"] == spec["ref"]
    assert "#   Faculty: {column: Faculty}" in (workdir / "draft.yaml").read_text(encoding="utf-8")


def test_unusual_headers_below_a_title_are_matched_as_a_person_would(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _unusual_workbook(workdir / "intake.xlsx")
    assert main(["init", "intake.xlsx"]) == EXIT_OK
    draft = workdir / "mappings" / "intake.yaml"
    block = _fields(draft)["intake_2027"]
    assert block["entity"] == "applicant" and block["header_row"] == 3 and block["key"] == ["external_id"]
    columns = {field: spec["column"] for field, spec in block["fields"].items()}
    assert columns == {"external_id": "Student No.", "first_name": "Given name(s)", "last_name": "Surname",
                       "email_address": "E-mail addr.", "date_of_birth": "D.O.B."}
    assert all(block["fields"][f]["pii"] is True for f in ("first_name", "last_name", "email_address",
                                                           "date_of_birth"))
    text = draft.read_text(encoding="utf-8")
    assert "#   Mobile: {column: Mobile, pii: true}" in text and '#   "Home campus": {column: "Home campus"}' in text
    assert "It validates." in capsys.readouterr().out


@pytest.fixture
def sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions(seed={"institution-a": {}})) as running:
        yield running


def test_a_plan_of_the_unusual_draft_works_against_the_sandbox(
    workdir: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "loader.yaml").write_text(loader_yaml_for(sandbox, "INIT_TEST_SECRET"), encoding="utf-8")
    monkeypatch.setenv("INIT_TEST_SECRET", sandbox.client_secret)
    _unusual_workbook(workdir / "intake.xlsx")
    assert main(["init", "intake.xlsx"]) == EXIT_OK
    capsys.readouterr()
    assert main(["plan", "mappings/intake.yaml", "--env", "local", "--detailed-exitcode"]) == 2
    out = capsys.readouterr().out
    assert "2 to create" in out and not re.search(r"\d errors?\b", out)
    assert "Lovelace" not in out  # pii: true masks the names in the report
    assert main(["apply", "mappings/intake.yaml", "--env", "local", "--yes"]) == EXIT_OK
    capsys.readouterr()
    assert main(["plan", "mappings/intake.yaml", "--env", "local", "--detailed-exitcode"]) == EXIT_OK


def test_init_never_overwrites_without_force(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _unusual_workbook(workdir / "intake.xlsx")
    (workdir / "mine.yaml").write_text("# my work\n", encoding="utf-8")
    assert main(["init", "intake.xlsx", "--out", "mine.yaml"]) == EXIT_USAGE
    assert (workdir / "mine.yaml").read_text(encoding="utf-8") == "# my work\n"
    assert "pass --force" in capsys.readouterr().err
    assert main(["init", "intake.xlsx", "--out", "mine.yaml", "--force"]) == EXIT_OK
    assert "entities:" in (workdir / "mine.yaml").read_text(encoding="utf-8")


def test_an_entity_given_is_used_and_an_unknown_one_is_a_usage_error(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy_samples(workdir)
    assert main(["init", "samples/intake-2027/curriculum.xlsx", "--sheet", "Programs", "--entity", "program",
                 "--out", "programs.yaml"]) == EXIT_OK
    block = _fields(workdir / "programs.yaml")["programs"]
    assert block["entity"] == "program" and block["fields"]["parent"] == {"column": "Course Code", "ref": "course",
                                                                        "transform": ["strip"]}
    assert main(["init", "samples/intake-2027/curriculum.xlsx", "--entity", "planet", "--out", "x.yaml"]) == EXIT_USAGE
    assert "one of: school" in capsys.readouterr().err


def test_a_csv_file_gets_one_block_without_a_sheet(workdir: Path) -> None:
    (workdir / "schools.csv").write_text("School Code,School Name,Faculty\nSCI,Science,Science\nENG,Eng,Eng\n",
                                         encoding="utf-8")
    assert main(["init", "schools.csv", "--out", "schools.yaml"]) == EXIT_OK
    data = yaml.safe_load((workdir / "schools.yaml").read_text(encoding="utf-8"))
    assert data["source"] == "schools.csv"
    (block,) = data["entities"].values()
    assert block["entity"] == "school" and "sheet" not in block
    assert {f: s["column"] for f, s in block["fields"].items()} == {"code": "School Code", "name": "School Name"}


def test_plans_of_the_sample_drafts_work_against_the_sandbox_with_last_cycles_data(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    copy_samples(workdir)
    seed = json.loads((workdir / "samples" / "sandbox-seed.json").read_text(encoding="utf-8"))
    drafts = []
    for workbook in ("curriculum", "applicants", "arrangements"):
        drafts.append(f"drafts/{workbook}.yaml")
        assert main(["init", f"samples/intake-2027/{workbook}.xlsx", "--out", drafts[-1]]) == EXIT_OK
    with serve_in_thread(SandboxOptions(seed=seed)) as sandbox:
        (workdir / "loader.yaml").write_text(loader_yaml_for(sandbox, "INIT_TEST_SECRET"), encoding="utf-8")
        monkeypatch.setenv("INIT_TEST_SECRET", sandbox.client_secret)
        capsys.readouterr()
        assert main(["plan", *drafts, "--env", "local", "--detailed-exitcode"]) == 2
    out = capsys.readouterr().out
    assert not re.search(r"\d errors?\b", out) and "to create" in out and "unchanged" in out
