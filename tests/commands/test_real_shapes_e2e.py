"""Contract section 4.1 end to end: `loader validate`, `plan` and `apply` through `loader.cli.main`
against the built-in sandbox, with a workbook written by openpyxl the way staff's tools write it
(title rows above the header, a merged title, dates typed into General cells as serial numbers,
numbers stored as text, codes stored as numbers, one row per offering, repeated column groups)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import openpyxl
import pytest

from loader.cli import main
from loader.errors import EXIT_CHANGES, EXIT_OK
from loader.places import place_from_dict

REPO = Path(__file__).resolve().parents[2]


def _intake(path: Path, *, broken: bool = False) -> Path:
    book = openpyxl.Workbook()
    people = book.active
    people.title = "Applicants 2027"
    people.append(["Applicant export — Intake 2027"])
    people.merge_cells("A1:F1")
    people.append(["Exported 02/11/2026 by the CRM"])
    people.append([])
    people.append(["Student ID", "Qual 1 Type", "Qual 1 Institution", "Qual 1 Code", "Qual 1 Completed",
                   "Qual 2 Type", "Qual 2 Institution", "Qual 2 Code", "Qual 2 Completed"])
    people.append(["A1000124", "Subject", "HSC Mathematics Extension 1", "NESA", None,
                   "Employment", "Barista", "CAFE", None])
    people.append(["A1000125", "Tertiary", "Diploma of Nursing", "TAFENSW", 46203,  # a General cell: a serial
                   None, None, None, None])
    people.append(["A1000126", "Professional", "Certified Practising Accountant", "CPAAU", None,
                   "Tertiary", "Graduate Certificate in Data", "UTS", "30/06/2025" if not broken else "31/02/2025"])
    offerings = book.create_sheet("Offerings")
    offerings.append(["Subject offerings 2027"])
    offerings.append([])
    offerings.append(["Subject Code", "Subject Title", "Program", "Campus", "Status", "Status", "Owner e-mail",
                      "Faculty"])
    offerings.append([48024, "Applications  Programming ", "BENGH-SW", "Albury", "Live", "x", "it@example.edu", 851])
    offerings.append(["48024", "Applications Programming", "BENGH-SW", "Online", "Live", "y", "it@example.edu", 851])
    offerings.append([4101, "Data Science Studio", "BSC-STAT", "Online", "Live", "z",
                      "stats@example.edu" if not broken else "stats at example", "SCI" if not broken else "SIC"])
    codes = book.create_sheet("Codes")
    codes.append(["Code", "Faculty"])
    codes.append(["SCI", "Faculty of Science"])
    codes.append(["851", "Faculty of Engineering and IT"])  # a number stored as text
    book.save(path)
    return path


MAPPING = """\
# yaml-language-server: $schema=../schemas/mapping.schema.json
version: 1
source: intake.xlsx
entities:
  credentials:
    entity: credential
    sheet: Applicants 2027
    header_row: auto
    repeat: {n: [1, 2]}
    where: {column: "Qual {n} Type", not_empty: true}
    key: [applicant_id, type, name]
    fields:
      applicant_id: {ref: applicant, column: Student ID}
      type: {column: "Qual {n} Type", transform: [strip, upper]}
      name: "Qual {n} Institution"
      institutionCode:
        column: "Qual {n} Code"
        when: {column: "Qual {n} Type", not_equals: Employment}
      completionDate: {column: "Qual {n} Completed", type: date, format: ["%d/%m/%Y", serial]}
  subjects:
    entity: subject
    sheet: Offerings
    header_row: auto
    key: [code]
    fields:
      code: {column: Subject Code, type: string, pad: {width: 5}}
      name: {column: Subject Title, replace: {pattern: '\\s+', with: " "}, transform: [strip]}
      parent: {ref: program, column: Program}
      custom_attributes:
        Campus: {column: Campus, collect: join}
        Status: {column: "Status#1"}
        Owner: {column: Owner e-mail, pattern: {regex: '[^@\\s]+@[^@\\s]+\\.[^@\\s]+', message: a valid e-mail address}}
        Faculty: {column: Faculty, lookup: {sheet: Codes, key: Code, value: Faculty}}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "samples").mkdir()
    shutil.copy(REPO / "samples" / "sandbox-seed.json", tmp_path / "samples" / "sandbox-seed.json")
    (tmp_path / "m.yaml").write_text(MAPPING, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_each_construct_validates_plans_and_applies_against_the_sandbox(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _intake(project / "intake.xlsx")
    assert main(["validate", "m.yaml"]) == EXIT_OK
    assert main(["plan", "m.yaml", "--out", "plan.json", "--detailed-exitcode"]) == EXIT_CHANGES
    out = capsys.readouterr().out
    assert "Albury, Online" in out and "04101" in out and "Faculty of Engineering and IT" in out
    plan = json.loads((project / "plan.json").read_text(encoding="utf-8"))
    text = json.dumps(plan, ensure_ascii=False)
    assert "Intake 2027" not in text  # the title row is not a record
    sources = [place_from_dict(r["source"]) for b in plan["blocks"] for r in b["records"]]
    assert "intake.xlsx › Applicants 2027 › row 7 (n=2)" in map(str, sources)  # the row and the repeat value
    assert main(["apply", "m.yaml", "--yes", "--results", "results.json", "--results", "results.xlsx"]) == EXIT_OK
    results = json.loads((project / "results.json").read_text(encoding="utf-8"))
    assert results["ok"] and results["totals"]["failed"] == 0 and results["totals"]["created"] == 4
    assert main(["plan", "m.yaml", "--detailed-exitcode"]) == EXIT_OK  # converged: the second plan is empty


def test_validate_quotes_every_new_message_at_its_place(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _intake(project / "intake.xlsx", broken=True)
    (project / "m.yaml").write_text(
        MAPPING.replace('{column: "Status#1"}', "{column: Status}").replace(
            "    sheet: Offerings\n    header_row: auto\n", "    sheet: Offerings\n"), encoding="utf-8")
    assert main(["validate", "m.yaml"]) != EXIT_OK
    captured = capsys.readouterr()
    said = " ".join((captured.out + captured.err).split())
    assert ("m.yaml:20:3: header row 1 of intake.xlsx › Offerings lacks 7 of the columns this block names "
            "('Subject Code', 'Subject Title', 'Program', 'Campus', 'Status' and 2 more); row 3 holds every column "
            "this block names: set `header_row: 3` (or `header_row: auto`)") in said
    (project / "m.yaml").write_text(MAPPING.replace('{column: "Status#1"}', "{column: Status}"), encoding="utf-8")
    assert main(["validate", "m.yaml"]) != EXIT_OK
    captured = capsys.readouterr()
    said = " ".join((captured.out + captured.err).split())
    assert ("the header 'Status' occurs 2 times: intake.xlsx › Offerings › E3 and intake.xlsx › Offerings › F3; "
            "name the one to read as Status#1 or Status#2") in said
    (project / "m.yaml").write_text(MAPPING, encoding="utf-8")
    assert main(["validate", "m.yaml"]) != EXIT_OK
    captured = capsys.readouterr()
    said = " ".join((captured.out + captured.err).split())
    assert "completionDate (n=2): that date does not exist: '31/02/2025'" in said
    assert "intake.xlsx › Applicants 2027 › I7" in said
    assert "custom_attributes.Owner: expected a valid e-mail address, got 'stats at example'" in said
    assert ("intake.xlsx › Offerings › H6 (04101): custom_attributes.Faculty: expected a Code listed in "
            "intake.xlsx › Codes (did you mean 'SCI'?), got 'SIC'") in said  # the row's key beside its cell


def test_validate_warns_of_a_field_the_credential_type_does_not_take(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _intake(project / "intake.xlsx")
    (project / "m.yaml").write_text(
        MAPPING.replace('        when: {column: "Qual {n} Type", not_equals: Employment}\n', ""), encoding="utf-8")
    assert main(["validate", "m.yaml"]) == EXIT_OK  # a warning, not an error
    captured = capsys.readouterr()
    said = " ".join((captured.out + captured.err).split())
    assert ("intake.xlsx › Applicants 2027 › H5: institutionCode (n=2): a credential of type EMPLOYMENT does not take "
            "institutionCode (it takes duration)") in said


@pytest.mark.parametrize("mappings", [
    ("mappings/curriculum.yaml", "mappings/real-world/offerings.yaml"),
    ("mappings/applicants.yaml", "mappings/real-world/applicant-export.yaml"),
    ("mappings/real-world/legacy-applicants.yaml",),
])
def test_the_real_world_samples_apply_beside_the_others_and_converge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mappings: tuple[str, ...]
) -> None:
    shutil.copytree(REPO / "mappings", tmp_path / "mappings")
    shutil.copytree(REPO / "samples", tmp_path / "samples", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(tmp_path)
    assert main(["validate", *mappings]) == EXIT_OK
    assert main(["apply", *mappings, "--yes", "--max-changes", "100%", "--results", "results.json"]) == EXIT_OK
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert results["ok"] and results["totals"]["failed"] == 0
    assert main(["plan", *mappings, "--detailed-exitcode"]) == EXIT_OK
