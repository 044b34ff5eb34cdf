"""`loader init` on workbooks shaped like real public catalogues: headers with line breaks,
multi-line cells, a code column that repeats, entity words in the headers; and on a pull workbook."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml

from loader.cli import main
from loader.errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from loader.safe_cells import escape_xlsx_text

UNIT_HEADERS = ["Unit\nCode", "Unit\nTitle", "Credit\nPoints", "Prerequisites", "Department", "Level",
                "Description", "Coordinator"]


def _book(path: Path, title: str, header: list[str], rows: list[list[Any]]) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = title
    sheet.append(header)
    for row in rows:  # escaped as Excel saves text: a carriage return as _x000D_
        sheet.append([escape_xlsx_text(v) if isinstance(v, str) else v for v in row])
    book.save(path)
    return path


def _units(path: Path) -> Path:
    rows = [[f"UNIT{n:04d}", f"Unit {n}\nof study\n\r", 6, f"UNIT{n - 1:04d}" if n else "", "Dept of\nThings", n % 4,
             f"Line one\nline two {n}\n\r", f"Ms {n} Bourne\n\r"] for n in range(40)]
    return _book(path, "Handbook export", UNIT_HEADERS, rows)


def _draft(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data["entities"]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_unit_catalogue_is_drafted_as_subjects_not_arrangements(workdir: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    _units(workdir / "units.xlsx")
    assert main(["init", "units.xlsx", "--out", "m.yaml"]) == EXIT_OK
    block = next(iter(_draft(workdir / "m.yaml").values()))
    assert block["entity"] == "subject" and block["key"] == ["code"]


def test_headers_that_fit_several_entities_stop_with_the_three_best_and_their_scores(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _book(workdir / "export.xlsx", "Export", ["Code", "Name", "Department", "Prerequisites", "Credit\nPoints"],
          [[f"C{n}", f"Thing {n}", "Dept", "", 6] for n in range(5)])
    assert main(["init", "export.xlsx", "--out", "m.yaml"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "cannot tell which entity" in err and "--entity" in err
    assert len(re.findall(r"\w+ \(\d+\.\d\)", err)) == 3  # three entities with their scores
    assert not (workdir / "m.yaml").exists()


def test_headers_with_line_breaks_are_drafted_folded_and_text_gets_collapse_spaces(workdir: Path) -> None:
    _units(workdir / "units.xlsx")
    assert main(["init", "units.xlsx", "--entity", "subject", "--out", "m.yaml"]) == EXIT_OK
    block = next(iter(_draft(workdir / "m.yaml").values()))
    assert block["fields"]["code"]["column"] == "Unit Code"
    assert block["fields"]["name"] == {"column": "Unit Title", "transform": ["strip", "collapse_spaces"]}
    text = (workdir / "m.yaml").read_text(encoding="utf-8")
    assert "Credit Points" in text and "Credit\\nPoints" not in text


def _courses(path: Path, *, unique_pairs: bool = True) -> Path:
    rows = []
    for n in range(30):
        for offering in ("S1", "S2", "S3"):
            rows.append([f"{100 + n}", offering if unique_pairs else "S1", f"Course {n}", "Dept", 3])
    return _book(path, "Catalogue", ["Course Number", "Offering", "Course Title", "Department", "Credits"], rows)


def test_a_key_whose_values_repeat_becomes_a_template_of_two_unique_columns(workdir: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    _courses(workdir / "courses.xlsx")
    assert main(["init", "courses.xlsx", "--entity", "course", "--out", "m.yaml"]) == EXIT_OK
    block = next(iter(_draft(workdir / "m.yaml").values()))
    assert block["key"] == ["code"]
    assert block["fields"]["code"]["template"] == "{Course Number}-{Offering}"
    assert "repeats" in (workdir / "m.yaml").read_text(encoding="utf-8")
    out = capsys.readouterr().out
    assert "It validates." in out and "code                 ← '{Course Number}-{Offering}'" in out


def test_a_course_catalogue_is_guessed_as_courses_not_schools(workdir: Path) -> None:
    _courses(workdir / "courses.xlsx")
    assert main(["init", "courses.xlsx", "--out", "m.yaml"]) == EXIT_OK
    assert next(iter(_draft(workdir / "m.yaml").values()))["entity"] == "course"


def test_a_key_with_no_unique_column_is_marked_to_choose_and_init_exits_1(workdir: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    _courses(workdir / "courses.xlsx", unique_pairs=False)
    assert main(["init", "courses.xlsx", "--entity", "course", "--out", "m.yaml"]) == EXIT_ERROR
    assert "choose the key" in capsys.readouterr().err
    assert "# CHOOSE" in (workdir / "m.yaml").read_text(encoding="utf-8")


def test_a_pull_workbook_maps_back_to_custom_attribute_labels_without_service_fields(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "samples").mkdir()
    seed = {"institution-a": {
        "schools": [{"id": "s-1", "code": "SCI", "name": "Science\n\r"}],
        "courses": [{"code": "BSC", "name": "=1+1", "parent": {"id": "s-1"},
                     "custom_attributes": {"Faculty": "Science"}}],
    }}
    (workdir / "samples" / "sandbox-seed.json").write_text(json.dumps(seed), encoding="utf-8")
    assert main(["pull", "school", "course", "--out", "live.xlsx"]) == EXIT_OK
    assert main(["init", "live.xlsx", "--out", "m.yaml"]) == EXIT_OK
    text = (workdir / "m.yaml").read_text(encoding="utf-8")
    course = _draft(workdir / "m.yaml")["course"]
    assert course["fields"]["custom_attributes"] == {"Faculty": {"column": "custom_attributes.Faculty"}}
    assert course["fields"]["parent"] == {"column": "parent.id", "ref": "school", "by": "id"}
    assert "custom_attributes.custom_attributes" not in text and "{column: id}" not in text
    assert "{column: type}" not in text
    capsys.readouterr()
    assert main(["plan", "m.yaml", "--format", "json"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["has_changes"] is False



def test_validate_warns_once_per_column_with_a_count_of_cells_holding_control_characters(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _units(workdir / "units.xlsx")
    assert main(["init", "units.xlsx", "--entity", "subject", "--out", "m.yaml"]) == EXIT_OK
    capsys.readouterr()
    main(["validate", "m.yaml"])
    out = capsys.readouterr().out
    assert "control characters" not in out, out  # the drafted steps strip the title's "\n\r"


UNITS_BLOCK = """\
  units:
    entity: subject
    sheet: Handbook export
    key: [code]
    fields:
      code: {column: Unit Code}
      name: {column: Unit Title, transform: [strip, collapse_spaces]}
"""
AREAS_BLOCK = """\
  areas:
    entity: program
    sheet: Handbook export
    key: [code]
    fields:
      code: {column: Unit Code, replace: {pattern: UNIT, with: P}}
      name: {column: Description}
"""


@pytest.mark.parametrize("blocks", [[UNITS_BLOCK, AREAS_BLOCK], [AREAS_BLOCK, UNITS_BLOCK]])
def test_control_characters_are_warned_per_column_after_its_steps_whichever_block_reads_the_sheet_first(
    workdir: Path, capsys: pytest.CaptureFixture[str], blocks: list[str]
) -> None:
    _units(workdir / "units.xlsx")
    (workdir / "m.yaml").write_text("version: 1\nsource: units.xlsx\nentities:\n" + "".join(blocks),
                                    encoding="utf-8")
    main(["validate", "m.yaml"])
    out = capsys.readouterr().out
    assert out.count("control characters") == 1, out
    assert "40 values of column 'Description'" in out  # not the title: its own steps clean it


def test_one_duplicated_code_keeps_the_natural_key_and_names_the_duplicate_as_an_error(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [[f"UNIT{n:04d}", f"Unit {n}", 6, "", "Dept", n % 4, f"About {n}", f"Ms {n}"] for n in range(40)]
    rows[30][0] = "UNIT0007"  # one code typed twice, rows 9 and 32 of the sheet
    _book(workdir / "units.xlsx", "Handbook export", UNIT_HEADERS, rows)
    assert main(["init", "units.xlsx", "--entity", "subject", "--out", "m.yaml"]) == EXIT_ERROR
    block = next(iter(_draft(workdir / "m.yaml").values()))
    assert block["key"] == ["code"] and block["fields"]["code"]["column"] == "Unit Code"
    out, err = capsys.readouterr()
    assert "It validates" not in out
    assert "'UNIT0007' on rows 9 and 32" in err and "natural key" in err


def test_pull_then_init_then_plan_proposes_nothing_when_subjects_hang_under_schools(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "samples").mkdir()
    seed = {"institution-a": {
        "schools": [{"id": "s-1", "code": "SCI", "name": "Science"}, {"id": "s-2", "code": "ART", "name": "Arts"}],
        "programs": [{"id": "p-1", "code": "MAJ", "name": "Major", "parent": {"id": "s-1"}}],
        "subjects": [{"code": f"U{n}", "name": f"Unit {n}", "parent": {"id": "s-1" if n % 2 else "s-2"}}
                     for n in range(6)],
    }}
    (workdir / "samples" / "sandbox-seed.json").write_text(json.dumps(seed), encoding="utf-8")
    assert main(["pull", "school", "program", "subject", "--out", "live.xlsx"]) == EXIT_OK
    assert main(["init", "live.xlsx", "--out", "m.yaml"]) == EXIT_OK
    assert _draft(workdir / "m.yaml")["subject"]["fields"]["parent"] == {"column": "parent.id", "ref": "school",
                                                                         "by": "id"}
    capsys.readouterr()
    main(["plan", "m.yaml", "--format", "json"])
    totals = json.loads(capsys.readouterr().out)["totals"]
    assert (totals["create"], totals["update"], totals["errors"]) == (0, 0, 0)


def test_an_areas_of_study_sheet_is_drafted_as_programs_under_their_courses(workdir: Path) -> None:
    rows = [[f"C{n}", f"Course {n}", f"AOS{n}{a}", f"Area {n}-{a}"] for n in range(10) for a in range(3)]
    _book(workdir / "aos.xlsx", "Areas of study",
          ["Course code", "Course title", "Area of study code", "Area of study title"], rows)
    assert main(["init", "aos.xlsx", "--out", "m.yaml"]) == EXIT_OK
    block = next(iter(_draft(workdir / "m.yaml").values()))
    assert block["entity"] == "program"
    assert block["fields"]["code"]["column"] == "Area of study code"
    assert block["fields"]["name"]["column"] == "Area of study title"
    assert (block["fields"]["parent"]["column"], block["fields"]["parent"]["ref"]) == ("Course code", "course")
