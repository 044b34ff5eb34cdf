"""`loader pull`: live records exported to a workbook through the embedded sandbox."""

from __future__ import annotations

import json

import openpyxl
import pytest
from helpers.output_schema import output_document

from loader.cli import main

SEED = {
    "institution-a": {
        "schools": [{"id": "s-1", "code": "SCI", "name": "School of Science"}],
        "courses": [
            {"code": "BSC", "name": "=HYPERLINK(\"http://x\")", "parent": {"id": "s-1"},
             "custom_attributes": {"Faculty": "Science"}},
        ],
    },
    "institution-b": {"schools": [{"code": "OTHER", "name": "Not ours"}]},
}


@pytest.fixture
def seeded_project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "samples").mkdir()
    (tmp_path / "samples" / "sandbox-seed.json").write_text(json.dumps(SEED), encoding="utf-8")
    return tmp_path


def test_pull_writes_one_sheet_per_entity_with_flat_columns(seeded_project, capsys):
    out = seeded_project / "live.xlsx"
    assert main(["pull", "school", "course", "--out", str(out)]) == 0
    book = openpyxl.load_workbook(out)
    assert book.sheetnames == ["school", "course"]
    schools = [[c.value for c in row] for row in book["school"].iter_rows()]
    assert schools[0][:4] == ["id", "code", "name", "type"]
    assert schools[1][:4] == ["s-1", "SCI", "School of Science", "SCHOOL"]
    assert len(schools) == 2  # institution B's school is not ours
    courses = {c.value: i for i, c in enumerate(book["course"][1])}
    row = [c.value for c in book["course"][2]]
    assert row[courses["parent.id"]] == "s-1"
    assert row[courses["custom_attributes.Faculty"]] == "Science"
    assert "course: 1 record\n" in capsys.readouterr().out


def test_pull_json_says_what_the_workbook_holds_in_the_output_schema(seeded_project, capsys):
    out = seeded_project / "live.xlsx"
    assert main(["pull", "school", "course", "--out", str(out), "--format", "json"]) == 0
    document = output_document(capsys.readouterr().out)
    assert document["command"] == "pull" and document["ok"] and document["wrote"] == str(out)
    assert document["entities"] == [{"entity": "school", "records": 1}, {"entity": "course", "records": 1}]
    assert "HYPERLINK" not in json.dumps(document)  # values are in the workbook only


def test_pull_json_of_an_unknown_entity_is_an_error_document(seeded_project, capsys):
    assert main(["pull", "courses", "--out", "x.xlsx", "--format", "json"]) == 64
    document = output_document(capsys.readouterr().out)
    assert document["command"] == "pull" and "unknown entity 'courses'" in document["error"]["message"]


def test_pull_neutralises_text_that_a_spreadsheet_would_run_as_a_formula(seeded_project):
    out = seeded_project / "live.xlsx"
    assert main(["pull", "course", "--out", str(out)]) == 0
    sheet = openpyxl.load_workbook(out)["course"]
    names = [c.value for c in sheet["C"]]
    assert names[1] == "'=HYPERLINK(\"http://x\")"
    assert sheet["C2"].data_type != "f"


def test_pull_refuses_an_unknown_entity_with_the_known_ones(seeded_project, capsys):
    assert main(["pull", "courses", "--out", "x.xlsx"]) == 64
    err = capsys.readouterr().err
    assert "unknown entity 'courses'" in err and "course" in err
