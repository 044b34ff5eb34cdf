from __future__ import annotations

import csv
import json
import stat
from dataclasses import replace
from pathlib import Path

import openpyxl
import pytest
from helpers.apply import make_plan

from loader.apply.results import Outcome, RecordResult, Results
from loader.errors import UsageError
from loader.findings import Finding
from loader.places import CellRef
from loader.report.results_files import check_results_path, write_results_files
from loader.report.results_json import write_results_json
from loader.report.results_terminal import render_results
from loader.report.results_workbook import FAILED_FILL, write_results_workbook


def _result(ref: str, outcome: Outcome, row: int, **values: object) -> RecordResult:
    return RecordResult(
        ref=f"courses/{ref}", block="courses", entity="course", key=(ref,), outcome=outcome,
        source=f"curriculum.xlsx › Courses › row {row}", row=row, **values,  # type: ignore[arg-type]
    )


def _source_workbook(path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Courses"
    sheet.append(["Course Code", "Course Title", "School Code"])
    sheet.append(["BSC", "Bachelor of Science", "SCI"])
    sheet.append(["BA", "=cmd|' /C calc'!A0", "ART"])
    sheet.append(["BX", "Broken", "NOPE"])
    sheet["B3"].data_type = "s"  # text that merely looks like a formula, as an export may hold
    workbook.save(path)


def _results(tmp_path: Path) -> Results:
    return Results(
        environment="sandbox",
        env_name="sandbox",
        records=(
            _result("BSC", Outcome.CREATED, 2, id="id-1", fields=("code", "name")),
            _result("BA", Outcome.UNCHANGED, 3, id="id-2"),
            _result("BX", Outcome.FAILED, 4, status=400, message="ValidationError: parent not found",
                    cells=(CellRef("curriculum.xlsx", "Courses", "C4", 4),)),
        ),
        block_sources={"courses": (str(tmp_path / "curriculum.xlsx"), "Courses")},
    )


def test_results_workbook_copies_source_rows_and_adds_outcome_columns(tmp_path: Path) -> None:
    _source_workbook(tmp_path / "curriculum.xlsx")
    out = tmp_path / "results.xlsx"
    notes = write_results_workbook(_results(tmp_path), out)
    assert notes == []
    sheet = openpyxl.load_workbook(out)["Courses"]
    rows = [[c.value for c in row] for row in sheet.iter_rows()]
    assert rows[0] == ["Course Code", "Course Title", "School Code", "loader status", "loader id", "loader message",
                       "loader block"]
    assert rows[1][:5] == ["BSC", "Bachelor of Science", "SCI", "created", "id-1"]
    assert rows[3][3:] == ["failed", None, "HTTP 400: ValidationError: parent not found", "courses"]


def test_results_workbook_opens_on_a_summary_and_its_outcome_columns_fit_and_filter(tmp_path: Path) -> None:
    _source_workbook(tmp_path / "curriculum.xlsx")
    out = tmp_path / "results.xlsx"
    write_results_workbook(replace(_results(tmp_path), apply_id="20261125T143103123Z-d532fb", elapsed_s=3.2), out)
    book = openpyxl.load_workbook(out)
    assert book.sheetnames == ["Summary", "Courses"] and book.active.title == "Summary"
    summary = [[c.value for c in row] for row in book["Summary"].iter_rows()]
    assert ["apply id", "20261125T143103123Z-d532fb"] in [row[:2] for row in summary]
    assert ["courses", "Courses", 1, 0, 1, 0, 1, 0] in summary
    sheet = book["Courses"]
    assert sheet.auto_filter.ref == "A1:G4"
    widths = {letter: sheet.column_dimensions[letter].width for letter in "DEFG"}
    assert widths["D"] >= len("loader status") and widths["F"] >= len("HTTP 400: ValidationError: parent not found")


def test_results_workbook_highlights_and_comments_the_failed_cell(tmp_path: Path) -> None:
    _source_workbook(tmp_path / "curriculum.xlsx")
    out = tmp_path / "results.xlsx"
    write_results_workbook(_results(tmp_path), out)
    sheet = openpyxl.load_workbook(out)["Courses"]
    assert sheet["C4"].fill.start_color.rgb.endswith(FAILED_FILL.start_color.rgb[-6:])
    assert "parent not found" in sheet["C4"].comment.text
    assert sheet["C2"].comment is None


def test_results_workbook_neutralises_a_formula_copied_from_the_source(tmp_path: Path) -> None:
    _source_workbook(tmp_path / "curriculum.xlsx")
    out = tmp_path / "results.xlsx"
    write_results_workbook(_results(tmp_path), out)
    sheet = openpyxl.load_workbook(out)["Courses"]
    assert sheet["B3"].value == "'=cmd|' /C calc'!A0"
    assert sheet["B3"].data_type == "s"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_results_workbook_from_a_csv_source_is_an_xlsx_with_the_rows(tmp_path: Path) -> None:
    with (tmp_path / "courses.csv").open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["Course Code", "Course Title"], ["BSC", "Science"], ["BA", "@Arts"]])
    results = Results(
        environment="sandbox", env_name="sandbox",
        records=(_result("BSC", Outcome.CREATED, 2, id="x"), _result("BA", Outcome.SKIPPED, 3, message="stale: x")),
        block_sources={"courses": (str(tmp_path / "courses.csv"), None)},
    )
    out = tmp_path / "results.xlsx"
    write_results_workbook(results, out)
    sheet = openpyxl.load_workbook(out)["courses"]
    assert [c.value for c in sheet[3]] == ["BA", "'@Arts", "skipped", None, "stale: x", "courses"]


def test_a_missing_source_is_noted_and_the_outcomes_still_written(tmp_path: Path) -> None:
    out = tmp_path / "results.xlsx"
    notes = write_results_workbook(_results(tmp_path), out)
    assert len(notes) == 1 and "not copied" in notes[0]
    sheet = openpyxl.load_workbook(out)["Courses"]
    assert sheet.cell(row=4, column=1).value == "failed"


def test_results_json_holds_every_record_with_totals_and_is_private(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    write_results_json(_results(tmp_path), out)
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["totals"] == {"created": 1, "updated": 0, "unchanged": 1, "skipped": 0, "failed": 1, "blocked": 0}
    assert data["ok"] is False
    assert [r["outcome"] for r in data["records"]] == ["created", "unchanged", "failed"]
    assert data["records"][2]["status"] == 400
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_terminal_summary_counts_per_block_and_names_each_failure(tmp_path: Path) -> None:
    text = render_results(_results(tmp_path))
    assert "courses  1 created, 0 updated, 1 unchanged, 0 skipped, 1 failed" in text
    assert "row 4  courses/BX: HTTP 400: ValidationError: parent not found" in text


def test_terminal_summary_ends_with_the_time_taken_the_apply_id_and_how_to_undo_it(tmp_path: Path) -> None:
    results = replace(_results(tmp_path), env_name="test", apply_id="20261125T143103123Z-d532fb", elapsed_s=185.4)
    text = render_results(results)
    assert text.endswith("Done in 3 min 05 s; apply 20261125T143103123Z-d532fb\n"
                         "  undo: loader revert --env test --apply 20261125T143103123Z-d532fb  "
                         "(makes a revert plan to review)")
    nothing = replace(results, apply_id=None, elapsed_s=0.42,
                      records=tuple(replace(r, outcome=Outcome.UNCHANGED) for r in results.records))
    assert render_results(nothing).endswith("Done in 0.4 s; nothing was written, so there is nothing to undo.")
    many = replace(results, records=tuple(replace(results.records[1], ref=f"courses/U{n}") for n in range(1_500)))
    assert "courses  0 created, 0 updated, 1,500 unchanged, 0 skipped, 0 failed" in render_results(many)


def test_records_blocked_by_errors_are_counted_per_block_and_listed_with_their_error(tmp_path: Path) -> None:
    blocked = _result("BY", Outcome.SKIPPED, 5, blocked=True,
                      message="not applied: no school with code 'NOPE' at curriculum.xlsx › Courses › C5")
    stale = _result("BZ", Outcome.SKIPPED, 6, message="stale: changed since the plan")
    results = replace(_results(tmp_path), records=(*_results(tmp_path).records, blocked, stale))
    text = render_results(results)
    assert "courses  1 created, 0 updated, 1 unchanged, 2 skipped (1 blocked by errors), 1 failed" in text
    assert ("Blocked by errors:\n  curriculum.xlsx › Courses › row 5  courses/BY: not applied: no school with code "
            "'NOPE' at curriculum.xlsx › Courses › C5\nSkipped:\n"
            "  curriculum.xlsx › Courses › row 6  courses/BZ") in text
    write_results_json(results, tmp_path / "results.json")
    data = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert data["totals"]["blocked"] == 1 and data["blocks"][0]["blocked"] == 1
    assert [r["ref"] for r in data["records"] if r["blocked"]] == ["courses/BY"]


def test_rows_that_never_became_records_are_marked_error_at_their_cell(tmp_path: Path) -> None:
    _source_workbook(tmp_path / "curriculum.xlsx")
    results = _results(tmp_path)
    results = Results(**{**results.__dict__, "records": results.records[:2]})
    bad_row = Finding("error", "not-a-date", "not a date: 'soon'", CellRef("curriculum.xlsx", "Courses", "B4", 4))
    other_sheet = Finding("error", "x", "elsewhere", CellRef("curriculum.xlsx", "Schools", "B4", 4))
    out = tmp_path / "results.xlsx"
    write_results_workbook(results, out, row_errors={"courses": (bad_row, other_sheet)})
    sheet = openpyxl.load_workbook(out)["Courses"]
    assert [c.value for c in sheet[4]][3:] == ["error", None, "not a date: 'soon'", "courses"]
    assert sheet["B4"].comment.text == "not a date: 'soon'"
    assert sheet["B2"].comment is None


def test_a_results_file_that_cannot_be_written_is_said_and_the_others_are_still_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the project: a saved plan's sources are copied from inside it only
    _source_workbook(tmp_path / "curriculum.xlsx")
    (tmp_path / "taken.json").mkdir()  # a folder where the file should go: writing it fails
    paths = [tmp_path / "taken.json", tmp_path / "out.json", tmp_path / "out.xlsx"]
    written = write_results_files(_results(tmp_path), paths, plan=make_plan())
    assert written is False
    assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["totals"]["created"] == 1
    assert openpyxl.load_workbook(tmp_path / "out.xlsx")["Courses"]["D2"].value == "created"
    err = capsys.readouterr().err
    assert f"loader: error: cannot write {tmp_path / 'taken.json'}" in err
    assert f"wrote {tmp_path / 'out.json'}" in err and f"wrote {tmp_path / 'out.xlsx'}" in err


def test_a_results_file_name_must_end_in_xlsx_or_json(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"use a \.xlsx or \.json file name"):
        check_results_path(tmp_path / "results.csv")
    check_results_path(tmp_path / "results.JSON")
