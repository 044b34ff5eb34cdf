"""results.xlsx copies the source as the plan read it: CSV encoding and delimiter, the header row
(also through `apply --plan`), merged cells, header styling and frozen panes; and every source
row of a record gets its outcome. Checked by re-opening the written workbook with openpyxl."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from helpers.apply import loader_yaml_for
from openpyxl.styles import Font, PatternFill

from loader.cli import main
from loader.sandbox.server import SandboxOptions, serve_in_thread

STATUS = "loader status"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions()) as running:
        yield running


@pytest.fixture
def project(tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "RESULTS_TEST_SECRET"), encoding="utf-8")
    monkeypatch.setenv("RESULTS_TEST_SECRET", sandbox.client_secret)
    monkeypatch.chdir(tmp_path)
    return tmp_path


_counter = iter(range(1, 10_000))


def _code(prefix: str) -> str:
    return f"{prefix}{next(_counter)}-{id(object()) % 100_000}"


def _titled_workbook(path: Path, rows: list[list[Any]]) -> None:
    """A sheet as offices make them: a merged, styled title, a note, the header on row 3 (bold,
    filled), frozen below the header, a wide first column."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Schools"
    sheet["A1"] = "Schools 2027"
    sheet["A1"].font = Font(bold=True, size=16)
    sheet.merge_cells("A1:C1")
    sheet["A2"] = "Prepared by the curriculum office"
    sheet.append(["Code", "Name", "Faculty"])
    for cell in sheet[3]:
        cell.font = Font(bold=True, color="FFFFFF")
        cell.fill = PatternFill("solid", start_color="1F4E78", end_color="1F4E78")
    for row in rows:
        sheet.append(row)
    sheet.freeze_panes = "A4"
    sheet.column_dimensions["A"].width = 31
    book.save(path)


def _mapping(path: Path, source: str, *, extra: str = "", sheet: str = "Schools") -> None:
    sheet_line = f"    sheet: {sheet}\n" if sheet else ""
    path.write_text(
        "version: 1\n"
        f"source: {source}\n"
        "entities:\n"
        "  schools:\n"
        "    entity: school\n"
        f"{sheet_line}"
        "    header_row: 3\n"
        f"{extra}"
        "    key: [code]\n"
        "    fields:\n"
        "      code: Code\n"
        "      name: Name\n",
        encoding="utf-8",
    )


def _rows(path: Path, title: str) -> list[list[Any]]:
    return [list(r) for r in openpyxl.load_workbook(path)[title].iter_rows(values_only=True)]


def test_apply_plan_results_head_the_outcomes_on_the_header_row_and_keep_the_layout(project: Path) -> None:
    first, second = _code("T"), _code("T")
    _titled_workbook(project / "schools.xlsx", [[first, "School one", "Sci"], [second, "School two", "Art"]])
    _mapping(project / "schools.yaml", "schools.xlsx")
    assert main(["plan", "schools.yaml", "--env", "local", "--out", "plan.json"]) == 0
    assert main(["apply", "--plan", "plan.json", "--env", "local", "--results", "out.xlsx"]) == 0

    rows = _rows(project / "out.xlsx", "Schools")
    assert rows[0][0] == "Schools 2027" and rows[1][0] == "Prepared by the curriculum office"
    assert rows[2] == ["Code", "Name", "Faculty", STATUS, "loader id", "loader message", "loader block"]
    assert rows[3][:4] == [first, "School one", "Sci", "created"]
    assert rows[4][:4] == [second, "School two", "Art", "created"]
    assert all(row[3] is None for row in rows[:2])  # nothing on the title rows

    sheet = openpyxl.load_workbook(project / "out.xlsx")["Schools"]
    assert [str(r) for r in sheet.merged_cells.ranges] == ["A1:C1"]
    assert sheet.freeze_panes == "A4"
    assert sheet["A1"].font.bold and sheet["A1"].font.size == 16
    assert sheet["B3"].font.bold and sheet["B3"].fill.start_color.rgb.endswith("1F4E78")
    assert sheet.column_dimensions["A"].width == 31


def test_a_plan_made_before_plans_recorded_the_header_row_still_applies(project: Path) -> None:
    code = _code("OLD")
    _titled_workbook(project / "schools.xlsx", [[code, "Old plan", "Sci"]])
    _mapping(project / "schools.yaml", "schools.xlsx")
    assert main(["plan", "schools.yaml", "--env", "local", "--out", "plan.json"]) == 0
    data = json.loads((project / "plan.json").read_text(encoding="utf-8"))
    for block in data["blocks"]:
        del block["reading"]
    (project / "plan.json").write_text(json.dumps(data), encoding="utf-8")
    assert main(["apply", "--plan", "plan.json", "--env", "local", "--results", "out.xlsx"]) == 0
    rows = _rows(project / "out.xlsx", "Schools")
    assert rows[3][:4] == [code, "Old plan", "Sci", "created"]


def test_results_read_a_csv_source_with_the_mappings_encoding_and_delimiter(project: Path) -> None:
    code = _code("É")
    text = f"Export;;\r\n;;\r\nCode;Name;Faculty\r\n{code};École de médecine;Santé\r\n"
    (project / "schools.csv").write_bytes(text.encode("cp1252"))
    _mapping(project / "schools.yaml", "schools.csv", extra="    encoding: cp1252\n    delimiter: ';'\n", sheet="")
    for argv in (
        ["apply", "schools.yaml", "--env", "local", "--yes", "--results", "direct.xlsx"],
        ["plan", "schools.yaml", "--env", "local", "--out", "plan.json"],
        ["apply", "--plan", "plan.json", "--env", "local", "--results", "from-plan.xlsx"],
    ):
        assert main(argv) == 0, argv
    direct = _rows(project / "direct.xlsx", "schools")
    assert direct[2] == ["Code", "Name", "Faculty", STATUS, "loader id", "loader message", "loader block"]
    assert direct[3][:4] == [code, "École de médecine", "Santé", "created"]
    from_plan = _rows(project / "from-plan.xlsx", "schools")
    assert from_plan[3][:4] == [code, "École de médecine", "Santé", "unchanged"]


@pytest.mark.parametrize("via_plan", [False, True])
def test_every_source_row_of_a_record_gets_its_outcome(project: Path, via_plan: bool) -> None:
    repeated, single = _code("R"), _code("S")
    _titled_workbook(
        project / "schools.xlsx",
        [[repeated, "Twice", "Sci"], [single, "Once", "Sci"], [repeated, "Twice", "Art"]],  # Faculty not mapped
    )
    _mapping(project / "schools.yaml", "schools.xlsx")
    if via_plan:
        assert main(["plan", "schools.yaml", "--env", "local", "--out", "plan.json"]) == 0
        assert main(["apply", "--plan", "plan.json", "--env", "local", "--results", "out.xlsx"]) == 0
    else:
        assert main(["apply", "schools.yaml", "--env", "local", "--yes", "--results", "out.xlsx"]) == 0
    rows = _rows(project / "out.xlsx", "Schools")
    assert rows[3][3] == rows[5][3] == "created"
    assert rows[3][4] == rows[5][4] and rows[3][4]  # the one record's id on both rows
    assert rows[4][3] == "created"


def test_a_sheet_wide_merge_is_left_out_of_the_layout_with_a_note(tmp_path: Path) -> None:
    import zipfile

    from loader.report.sheet_layout import read_layout

    small = tmp_path / "small.xlsx"
    _titled_workbook(small, [["X", "Y", "Z"]])
    bomb = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(small) as source, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b'ref="A1:C1"', b'ref="A1:XFD1048576"')
            target.writestr(item, data)
    layout = read_layout(bomb, "Schools", 3)
    assert layout.merged == ()
    assert layout.notes == ("merged range A1:XFD1048576 not kept (over 1,000,000 cells)",)
    assert layout.frozen == "A4"


def test_rows_of_two_blocks_merged_into_one_record_both_get_its_outcome(project: Path) -> None:
    code = _code("M")
    _titled_workbook(project / "schools.xlsx", [[code, "Merged", "Sci"]])
    (project / "schools.yaml").write_text(
        "version: 1\nsource: schools.xlsx\nentities:\n"
        "  names:\n    entity: school\n    sheet: Schools\n    header_row: 3\n    key: [code]\n"
        "    fields: {code: Code, name: Name}\n"
        "  faculties:\n    entity: school\n    sheet: Schools\n    header_row: 3\n    key: [code]\n"
        "    fields: {code: Code, custom_attributes: {Faculty: {column: Faculty}}}\n",
        encoding="utf-8",
    )
    assert main(["plan", "schools.yaml", "--env", "local", "--out", "plan.json"]) == 0
    assert main(["apply", "--plan", "plan.json", "--env", "local", "--results", "out.xlsx"]) == 0
    rows = _rows(project / "out.xlsx", "Schools")
    assert rows[2][3:] == ["loader status", "loader id", "loader message", "loader block"]  # one set for both
    assert rows[3][3] == "created" and rows[3][6] == "names"
    assert rows[3][5].endswith("also faculties: created")


def _rewritten(source: Path, target: Path, change: Any) -> None:
    import zipfile

    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for item in old.infolist():
            data = old.read(item)
            new.writestr(item, change(data) if item.filename == "xl/worksheets/sheet1.xml" else data)


def test_the_layout_of_a_sheet_written_with_a_namespace_prefix_is_read(tmp_path: Path) -> None:
    import re

    from loader.report.sheet_layout import read_layout

    plain = tmp_path / "plain.xlsx"
    _titled_workbook(plain, [["X", "Y", "Z"]])
    prefixed = tmp_path / "prefixed.xlsx"

    def with_prefix(data: bytes) -> bytes:  # .NET Open XML SDK style: <x:worksheet xmlns:x="...">
        data = re.sub(rb"<(/?)(?!\?)([A-Za-z]+)([ />])", rb"<\1x:\2\3", data)
        return data.replace(b' xmlns="', b' xmlns:x="', 1)

    _rewritten(plain, prefixed, with_prefix)
    assert b"<x:mergeCell " in __import__("zipfile").ZipFile(prefixed).read("xl/worksheets/sheet1.xml")
    layout = read_layout(prefixed, "Schools", 3)
    assert layout == read_layout(plain, "Schools", 3)
    assert layout.merged == ((1, 1, 3, 1),) and layout.frozen == "A4" and (3, 2) in layout.header_styles


def test_the_layout_reader_refuses_a_sheet_declaring_a_dtd(tmp_path: Path) -> None:
    from loader.report.sheet_layout import LayoutError, read_layout

    plain = tmp_path / "plain.xlsx"
    _titled_workbook(plain, [["X", "Y", "Z"]])
    with_dtd = tmp_path / "dtd.xlsx"
    _rewritten(plain, with_dtd, lambda d: b'<!DOCTYPE x [<!ENTITY a "aaaa">]>' + d.split(b"?>", 1)[-1])
    with pytest.raises(LayoutError, match="DTD"):
        read_layout(with_dtd, "Schools", 3)


@pytest.mark.parametrize("named", ["absolute", "relative", "symlink"])
def test_results_never_copy_a_file_outside_the_project_that_a_plan_names(tmp_path: Path, named: str) -> None:
    from loader.apply.results import Results
    from loader.report.results_workbook import write_results_workbook

    project = tmp_path / "project"
    project.mkdir()
    secret = tmp_path / "secret.csv"
    secret.write_text("user,password\nroot,hunter2\n", encoding="utf-8")
    (project / "outside.csv").symlink_to(secret)
    file = {"absolute": str(secret), "relative": "../secret.csv", "symlink": "outside.csv"}[named]
    results = Results("sandbox", "local", (), block_sources={"users": (file, None)})
    notes = write_results_workbook(results, project / "results.xlsx", base=project, confine_to=project)
    assert notes == [f"{file}: source rows not copied (the file lies outside the project folder {project})"]
    book = openpyxl.load_workbook(project / "results.xlsx")
    values = [v for sheet in book for row in sheet.iter_rows(values_only=True) for v in row]
    assert "hunter2" not in values and "root" not in values
