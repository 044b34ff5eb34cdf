"""The `elmo` pack: a fresh project copies it and loads the EMREX example transcript end to end
(an applicant keyed through the institution's crosswalk, a TERTIARY and SUBJECT credentials, plan
empty after apply); the learner's national identifier is in no output; a course taken twice is two
credentials."""

from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import load_workbook

from loader.cli import main
from loader.plan.model import Action
from loader.plan.plan_file import read_plan_json

MAPPING = "mappings/elmo.yaml"
NATIONAL_ID = "83041200000"  # the example learner's national identifier: never shown


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loader.yaml").write_text("{}\n", encoding="utf-8")
    return tmp_path


def test_a_fresh_project_loads_the_elmo_example_keyed_through_the_crosswalk(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "--pack", "elmo"]) == 0, capsys.readouterr()
    assert main(["test"]) == 0  # the pack's own cases, in the project it was copied into
    assert "1 case in 1 test file: all passed" in capsys.readouterr().out
    outputs = ["--out", "plan.json", "--report", "plan.md", "--html", "plan.html"]
    assert main(["plan", MAPPING, *outputs]) == 0
    plan = read_plan_json(project / "plan.json")
    created = {(r.entity, r.key[1:] if r.entity == "credential" else r.key): r.payload
               for r in plan.records() if r.action == Action.CREATE}
    assert set(created) == {
        ("applicant", ("APP-2027-0001",)),
        ("credential", ("TERTIARY", "Master of Science in Biology")),
        ("credential", ("SUBJECT", "Compiler construction (Winter Semester of 2014)")),
        ("credential", ("SUBJECT", "Identifying ectomycorrhizal fungi (University of Copenhagen) (2007 Autumn)")),
    }
    applicant = created[("applicant", ("APP-2027-0001",))]
    assert applicant["first_name"] == "Wojciech Łukasz" and applicant["date_of_birth"] == "1983-04-12"
    degree = created[("credential", ("TERTIARY", "Master of Science in Biology"))]
    assert degree["institutionName"] == "University of Warsaw" and degree["completionDate"] == "2009-06-15"
    assert main(["apply", "--plan", "plan.json", "--results", "results.json", "--results", "results.xlsx"]) == 0
    assert main(["plan", MAPPING, "--detailed-exitcode"]) == 0
    printed = capsys.readouterr()
    shown = [printed.out, printed.err] + [(project / name).read_text("utf-8")
                                          for name in ("plan.json", "plan.md", "plan.html", "results.json")]
    shown += [str(value) for sheet in load_workbook(project / "results.xlsx")
              for row in sheet.iter_rows(values_only=True) for value in row]
    assert not [text for text in shown if NATIONAL_ID in text]
    assert load_workbook(project / "results.xlsx")["applicants"]["A2"].value == "APP-2027-0001"


def test_a_course_taken_again_is_another_credential_not_a_collision(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "--pack", "elmo"]) == 0
    transcript = project / "samples/elmo/transcripts/example.xml"
    text = transcript.read_text("utf-8")
    start = text.index("<learningOpportunitySpecification>\n            <identifier type=\"local\">1000-217bMRJ")
    end = text.index("</learningOpportunitySpecification>\n        <learningOpportunitySpecification>", start)
    course = text[start:end] + "</learningOpportunitySpecification>\n        "
    retaken = course.replace("Winter Semester of 2014", "Winter Semester of 2015").replace("45.1", "71.0")
    transcript.write_text(text[:start] + course + retaken + text[start + len(course):], encoding="utf-8")
    assert main(["plan", MAPPING, "--out", "plan.json"]) == 0, capsys.readouterr()
    names = sorted(r.key[2] for r in read_plan_json(project / "plan.json").records()
                   if r.entity == "credential" and r.key[1] == "SUBJECT")
    assert names[:2] == ["Compiler construction (Winter Semester of 2014)",
                         "Compiler construction (Winter Semester of 2015)"]
