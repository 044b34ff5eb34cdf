"""Drift between cycles: the shape each apply recorded, compared by the next plan.

Three cycles of one flat sheet read by three blocks (schools, courses, and programs by `repeat`):
a no-op apply between the first two reports nothing; then the sheet lost a column, gained one,
shrank by 40%, gained a new faculty and a "Program 4" group beside `n: [1, 2, 3]` (an error).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.apply import loader_yaml_for
from helpers.mapping import write_workbook

from loader.cli import main
from loader.sandbox.server import SandboxOptions, serve_in_thread

MAPPING = """\
version: 1
source: flat.xlsx
entities:
  schools:
    entity: school
    sheet: Flat
    key: [code]
    fields:
      code: School Code
      name: School Name
      custom_attributes:
        Faculty: Faculty
    drift: {{rows: 20%, values: [custom_attributes.Faculty]{drift}}}
  courses:
    entity: course
    sheet: Flat
    key: [code]
    fields:
      code: Course Code
      name: Course Title
      parent: {{ref: school, column: School Code}}
  programs:
    entity: program
    sheet: Flat
    repeat: {{n: [1, 2, 3]}}
    where: {{column: "Program {{n}} Code", not_empty: true}}
    key: [code]
    fields:
      code: "Program {{n}} Code"
      name: "Program {{n}} Name"
      parent: {{ref: course, column: Course Code}}
"""
FIRST = ["School Code", "School Name", "Faculty", "Course Code", "Course Title", "Notes",
         "Program 1 Code", "Program 1 Name", "Program 2 Code", "Program 2 Name", "Program 3 Code", "Program 3 Name"]


def _row(i: int, faculty: str) -> list[str | None]:
    return [f"S{i}", f"School {i}", faculty, f"C{i}", f"Course {i}", "note", f"P{i}A", f"Program {i}A", None, None,
            None, None]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with serve_in_thread(SandboxOptions(seed={"institution-a": {}})) as sandbox:
        (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "DRIFT_TEST_SECRET"), encoding="utf-8")
        monkeypatch.setenv("DRIFT_TEST_SECRET", sandbox.client_secret)
        monkeypatch.chdir(tmp_path)
        yield tmp_path


def _write(project: Path, header: list[str], rows: list[list[Any]], drift: str = "") -> None:
    write_workbook(project / "flat.xlsx", {"Flat": [header, *rows]})
    (project / "flat.yaml").write_text(MAPPING.format(drift=drift), encoding="utf-8")


def _drift(capsys: pytest.CaptureFixture[str]) -> list[tuple[str, str, str]]:
    """The plan's drift findings: (severity, code, message)."""
    capsys.readouterr()
    main(["plan", "flat.yaml", "--env", "local", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    return [(f["severity"], f["code"], f["message"]) for f in document["findings"] if f["code"].startswith("drift")]


def _third_cycle(project: Path, drift: str = "") -> None:
    """Notes gone, Credit Points (2027) and a Program 4 group new, 6 rows of 10, a new faculty, and
    Course Title gone empty."""
    header = [c for c in FIRST if c != "Notes"] + ["Credit Points (2027)", "Program 4 Code", "Program 4 Name"]
    rows = [[c for n, c in enumerate(_row(i, "Faculty of Science")) if FIRST[n] != "Notes"] + ["6", None, None]
            for i in range(5)]
    rows.append([c for n, c in enumerate(_row(5, "Faculty of Law")) if FIRST[n] != "Notes"] + ["6", "P5D", "Four"])
    for row in rows:
        row[header.index("Course Title")] = None
    _write(project, header, rows, drift)


def test_drift_over_three_cycles(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(project, FIRST, [_row(i, "Faculty of Science") for i in range(10)])
    capsys.readouterr()
    main(["plan", "flat.yaml", "--env", "local"])
    assert "note: drift is not compared: no apply has recorded a shape yet" in capsys.readouterr().err
    assert _drift(capsys) == []  # nothing recorded yet: nothing to compare
    assert main(["apply", "flat.yaml", "--env", "local", "--yes"]) == 0
    assert (project / "history" / "local.shapes.json").is_file()
    assert _drift(capsys) == []  # unchanged: nothing said
    assert main(["apply", "flat.yaml", "--env", "local", "--yes"]) == 0  # a no-op apply still records
    assert _drift(capsys) == []

    _third_cycle(project)
    found = _drift(capsys)
    assert ("error", "drift-repeat", "flat.xlsx › Flat: new column 'Program 4 Code' matches the repeat of block "
            "programs with n=4, which `repeat:` does not list: its values would be lost") in found
    assert ("error", "drift-repeat", "flat.xlsx › Flat: new column 'Program 4 Name' matches the repeat of block "
            "programs with n=4, which `repeat:` does not list: its values would be lost") in found
    assert ("warning", "drift-new-column", "flat.xlsx › Flat: new column 'Credit Points (2027)', read by no block; "
            "if that is intended, add it to the block's drift: accept: ['Credit Points (2027)']") in found
    assert ("warning", "drift-gone-column", "flat.xlsx › Flat: column 'Notes' is gone; if that is intended, add it "
            "to the block's drift: accept: ['Notes']") in found
    assert ("warning", "drift-rows", "flat.xlsx › Flat: rows read went from 10 to 6 (-40%), beyond drift rows: "
            "20%") in found
    assert ("warning", "drift-rows", "flat.xlsx › Flat: rows kept by schools went from 10 to 6 (-40%), beyond "
            "drift rows: 20%") in found
    assert ("warning", "drift-new-value", "schools: custom_attributes.Faculty has a value never seen before: "
            "'Faculty of Law'; if that is intended, add it to the block's drift: accept: "
            "['custom_attributes.Faculty=Faculty of Law']") in found
    assert ("warning", "drift-empty-column", "flat.xlsx › Flat: column 'Course Title' is now mostly empty: 0% of "
            "rows hold a value (was 100%); if that is intended, add it to the block's drift: accept: "
            "['Course Title']") in found
    assert len(found) == 8  # the three blocks flag none of each other's columns


def test_freeze_makes_new_and_gone_columns_errors_and_accept_silences_what_it_lists(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(project, FIRST, [_row(i, "Faculty of Science") for i in range(10)])
    assert main(["apply", "flat.yaml", "--env", "local", "--yes"]) == 0
    _third_cycle(project, ", columns: freeze")
    frozen = {(severity, code) for severity, code, _ in _drift(capsys)}
    assert ("error", "drift-new-column") in frozen and ("error", "drift-gone-column") in frozen
    _third_cycle(project, ', columns: freeze, accept: ["Credit Points (2027)", Notes, "Course Title", '
                          '"custom_attributes.Faculty=Faculty of Law"]')
    accepted = {code for _, code, _ in _drift(capsys)}
    assert accepted == {"drift-repeat", "drift-rows"}  # the repeat's lost data is never accepted away


def test_history_false_records_nothing(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with (project / "loader.yaml").open("a", encoding="utf-8") as config:
        config.write("history: false\n")
    _write(project, FIRST, [_row(i, "Faculty of Science") for i in range(10)])
    assert main(["apply", "flat.yaml", "--env", "local", "--yes"]) == 0
    assert not list(project.rglob("*.shapes.json"))


def test_an_apply_of_a_saved_plan_records_the_shape_too(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(project, FIRST, [_row(i, "Faculty of Science") for i in range(10)])
    assert main(["plan", "flat.yaml", "--env", "local", "--out", "plan.json"]) == 0
    assert main(["apply", "--plan", "plan.json", "--env", "local", "--yes"]) == 0
    shapes = json.loads((project / "history" / "local.shapes.json").read_text(encoding="utf-8"))
    assert shapes["sources"]["flat.xlsx › Flat"]["rows"] == 10
    _third_cycle(project)
    assert {code for _, code, _ in _drift(capsys)} >= {"drift-repeat", "drift-rows", "drift-new-column"}
