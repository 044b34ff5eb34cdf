"""The sheet-XML pass reads the package as the format defines it: relationships, namespaces, Strict.

Workbooks here are written as zip + XML by the test (helpers.raw_xlsx) in the shapes real programs
save: Excel's Strict Open XML, the .NET Open XML SDK's prefixed `<x:c>`, parts with other names.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from helpers.raw_xlsx import cells, workbook_parts, write_package, write_raw_workbook

from loader.errors import SheetError
from loader.source.patterns import compile_pattern
from loader.source.readers import first_visible_sheet, read_sheet, sheet_names
from loader.source.steps import Steps, apply_steps

_SHAPES: dict[str, dict[str, Any]] = {
    "transitional": {},
    "strict": {"strict": True},
    "prefixed": {"prefix": "x"},
    "strict and prefixed": {"strict": True, "prefix": "s"},
    "other part names": {"folder": "book", "sheet_part": "data/First%20Sheet.xml"},
}
_STYLES = (
    '<numFmts count="1"><numFmt numFmtId="164" formatCode="00000"/></numFmts>'
    '<cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="164" applyNumberFormat="1"/></cellXfs>'
)
_BODY = (
    '<sheetData>'
    '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c></row>'
    '<row r="2"><c r="A2" t="s"><v>3</v></c><c r="B2" s="1"><v>851</v></c><c r="C2"><f>1/0</f></c></row>'
    '<row r="3"><c r="B3" s="1"><v>42</v></c><c r="C3" t="e"><f>1/0</f><v>#DIV/0!</v></c></row>'
    '</sheetData><mergeCells count="1"><mergeCell ref="A2:A3"/></mergeCells>'
)


@pytest.mark.parametrize("shape", list(_SHAPES))
def test_every_spelling_of_a_workbook_gives_merged_fills_padding_and_warnings(tmp_path: Path, shape: str) -> None:
    path = write_raw_workbook(tmp_path / "w.xlsx", [("Data", _BODY)], styles=_STYLES,
                              shared_strings=["School", "Code", "Result", "SCI"], **_SHAPES[shape])
    data = read_sheet(path, "w.xlsx", "Data")
    assert [(r.number, r.values) for r in data.rows] == [
        (1, ("School", "Code", "Result")),
        (2, ("SCI", "00851")),
        (3, ("SCI", "00042")),
    ]
    assert [(str(c), code) for c, code, _ in data.warnings] == [
        ("w.xlsx › Data › C2", "formula-uncached"), ("w.xlsx › Data › C3", "cell-error"),
    ]


def test_a_formula_giving_an_inline_string_has_a_value_and_no_warning(tmp_path: Path) -> None:
    body = ('<sheetData><row r="1"><c r="A1" t="inlineStr"><f>"a"&amp;"b"</f><is><t>ab</t></is></c>'
            '<c r="B1"><f>1+1</f></c></row></sheetData>')
    data = read_sheet(write_raw_workbook(tmp_path / "i.xlsx", [("S", body)]), "i.xlsx", "S")
    assert data.rows[0].values == ("ab",)
    assert [str(c) for c, _, _ in data.warnings] == ["i.xlsx › S › B1"]


def test_cells_without_a_reference_follow_the_previous_cell(tmp_path: Path) -> None:
    body = ('<sheetData><row r="1"><c><v>1</v></c><c r="C1"><v>3</v></c></row>'
            '<row><c t="e"><v>#N/A</v></c></row></sheetData>')
    data = read_sheet(write_raw_workbook(tmp_path / "n.xlsx", [("S", body)]), "n.xlsx", "S")
    assert [(str(c), m) for c, _, m in data.warnings] == [
        ("n.xlsx › S › A2", "the cell holds the error #N/A, so it is read as empty"),
    ]


def test_a_chart_sheet_that_comes_first_is_not_the_default_sheet(tmp_path: Path) -> None:
    path = write_raw_workbook(tmp_path / "c.xlsx", [("Chart", None), ("Data", cells([["Code"], ["X1"]]))])
    assert sheet_names(path) == ["Chart", "Data"]
    assert first_visible_sheet(path) == "Data"
    data = read_sheet(path, "c.xlsx")
    assert (data.sheet, len(data.rows)) == ("Data", 2)
    with pytest.raises(SheetError, match="the sheet is a chart sheet, not a worksheet"):
        read_sheet(path, "c.xlsx", "Chart")


def test_a_merged_range_below_the_last_row_holding_a_value_is_filled(tmp_path: Path) -> None:
    path = tmp_path / "m.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["School", "Course"])
    sheet.append(["SCI", "BSC"])
    sheet.merge_cells("A2:A5")
    sheet.merge_cells("B7:C8")  # a merge whose top-left is empty gives nothing
    book.save(path)
    data = read_sheet(path, "m.xlsx", "Sheet")
    assert [(r.number, r.values) for r in data.rows] == [
        (1, ("School", "Course")), (2, ("SCI", "BSC")), (3, ("SCI",)), (4, ("SCI",)), (5, ("SCI",)),
    ]
    assert read_sheet(path, "m.xlsx", "Sheet", engine="openpyxl").rows == data.rows


_DATE_STYLES = (
    '<numFmts count="5"><numFmt numFmtId="164" formatCode="[h]:mm"/><numFmt numFmtId="165" formatCode="[mm]:ss"/>'
    '<numFmt numFmtId="166" formatCode="[s]"/><numFmt numFmtId="167" formatCode="yyyy\\-mm\\-dd"/>'
    '<numFmt numFmtId="168" formatCode="[hh]:mm:ss"/></numFmts>'
    '<cellXfs count="7"><xf numFmtId="0"/><xf numFmtId="164"/><xf numFmtId="165"/><xf numFmtId="166"/>'
    '<xf numFmtId="167"/><xf numFmtId="168"/><xf numFmtId="20"/></cellXfs>'
)


def test_durations_read_as_iso_8601_text(tmp_path: Path) -> None:
    body = ('<sheetData><row r="1"><c r="A1" s="1"><v>1.5208333333333333</v></c><c r="B1" s="2"><v>0.01</v></c>'
            '<c r="C1" s="3"><v>0.5</v></c><c r="D1" s="5"><v>0.000011574074074074073</v></c>'
            '<c r="E1" s="1"><v>-0.25</v></c><c r="F1" s="1"><v>0</v></c></row></sheetData>')
    path = write_raw_workbook(tmp_path / "d.xlsx", [("S", body)], styles=_DATE_STYLES)
    assert read_sheet(path, "d.xlsx", "S").rows[0].values == ("PT36H30M", "PT14M24S", "PT12H", "PT1S", "-PT6H",
                                                              "PT0S")


def test_a_duration_passes_the_value_steps_as_text(tmp_path: Path) -> None:
    body = '<sheetData><row r="1"><c r="A1" s="1"><v>1.5208333333333333</v></c></row></sheetData>'
    value = read_sheet(write_raw_workbook(tmp_path / "d.xlsx", [("S", body)], styles=_DATE_STYLES), "d.xlsx",
                       "S").rows[0].values[0]
    assert apply_steps(value, Steps()) == "PT36H30M"
    assert apply_steps(value, Steps(map={"PT36H30M": "36.5 hours"})) == "36.5 hours"
    assert apply_steps(value, Steps(pattern=compile_pattern(r"PT\d+H(\d+M)?"))) == "PT36H30M"


def test_durations_written_by_openpyxl_read_the_same_in_both_engines(tmp_path: Path) -> None:
    path = tmp_path / "o.xlsx"
    book = openpyxl.Workbook()
    book.active.append(["Duration"])
    book.active.append([dt.timedelta(hours=36, minutes=30)])
    book.active["A2"].number_format = "[h]:mm"
    book.save(path)
    for engine in ("calamine", "openpyxl"):
        assert read_sheet(path, "o.xlsx", "Sheet", engine=engine).rows[1].values == ("PT36H30M",)


@pytest.mark.parametrize(("date1904", "expected"), [
    (False, (dt.date(1899, 12, 25), dt.time(0, 0), dt.date(1900, 1, 1), dt.time(12, 0))),  # 0: Excel's day 0
    (True, (dt.date(1903, 12, 27), dt.date(1904, 1, 1), dt.date(1904, 1, 2), dt.time(12, 0))),
])
def test_date_serials_below_one_are_dates_not_times_of_day(tmp_path: Path, date1904: bool,
                                                           expected: tuple[object, ...]) -> None:
    body = ('<sheetData><row r="1"><c r="A1" s="4"><v>-5</v></c><c r="B1" s="4"><v>0</v></c>'
            '<c r="C1" s="4"><v>1</v></c><c r="D1" s="6"><v>0.5</v></c></row></sheetData>')
    path = write_raw_workbook(tmp_path / "e.xlsx", [("S", body)], styles=_DATE_STYLES, date1904=date1904)
    assert read_sheet(path, "e.xlsx", "S").rows[0].values == expected


def _long_sheet(rows: int, special: dict[int, str]) -> str:
    """Many plain rows (several 1 MB blocks, which the pass may leave out of the parse), some `special`."""
    plain = "".join(special.get(r, f'<row r="{r}"><c r="A{r}"><v>{r}</v></c><c r="B{r}" t="inlineStr"><is>'
                                   f'<t>text {r}</t></is></c></row>') for r in range(1, rows + 1))
    return f"<sheetData>{plain}</sheetData>"


def test_a_formula_and_an_error_far_down_a_long_sheet_are_still_found(tmp_path: Path) -> None:
    body = _long_sheet(30_000, {
        15_000: '<row r="15000"><c r="D15000" t="e"><v>#REF!</v></c></row>',
        30_000: '<row r="30000"><c r="A30000"><v>1</v></c><c r="C30000"><f>A1*2</f></c></row>',
    })
    data = read_sheet(write_raw_workbook(tmp_path / "long.xlsx", [("S", body)]), "long.xlsx", "S")
    assert [(str(c), code) for c, code, _ in data.warnings] == [
        ("long.xlsx › S › C30000", "formula-uncached"), ("long.xlsx › S › D15000", "cell-error"),
    ]
    assert len(data.rows) == 29_999  # row 15000 holds only an error: empty


@pytest.mark.parametrize(("far", "columns"), [("ZZ", "702"), ("XFD", "16,384")])
def test_cells_far_apart_in_plain_rows_of_a_long_sheet_are_bounded(tmp_path: Path, far: str, columns: str) -> None:
    # The far column sits in a middle block (left out of the parse for "ZZ", parsed for "XFD"),
    # the far row in the last block.
    body = _long_sheet(30_000, {15_000: f'<row r="15000"><c r="{far}15000"><v>1</v></c></row>',
                                30_000: '<row r="1048576"><c r="A1048576"><v>1</v></c></row>'})
    shape = rf"the cells holding values span [0-9,]+ cells \(rows 1-[0-9]+, {columns} columns\)"
    with pytest.raises(SheetError, match=shape):
        read_sheet(write_raw_workbook(tmp_path / "far.xlsx", [("S", body)]), "far.xlsx", "S")


def test_a_package_with_backslashed_item_names_is_read(tmp_path: Path) -> None:
    parts = workbook_parts([("S", cells([["Code"], ["X1"]]))])
    path = write_package(tmp_path / "win.xlsx", {name.replace("/", "\\"): data for name, data in parts.items()})
    assert [r.values for r in read_sheet(path, "win.xlsx", "S").rows] == [("Code",), ("X1",)]


def test_what_the_structure_pass_reads_but_the_value_reader_cannot_is_said_plainly(tmp_path: Path) -> None:
    parts = workbook_parts([("S", cells([["Code"], ["X1"]]))])
    del parts["_rels/.rels"]  # the workbook part is still found, through [Content_Types].xml
    path = write_package(tmp_path / "norels.xlsx", parts)
    assert sheet_names(path) == ["S"]
    with pytest.raises(SheetError) as caught:
        read_sheet(path, "norels.xlsx", "S")
    assert caught.value.message.startswith("the sheet's structure reads correctly but its values cannot be read (")
    assert caught.value.where == "norels.xlsx › S"


def test_a_row_end_hidden_in_a_comment_cannot_hide_cells_from_the_bounds(tmp_path: Path) -> None:
    body = _long_sheet(30_000, {
        2: '<!-- </row> --><row r="2"><c r="A2"><v>2</v></c></row>',
        30_000: '<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>',
    })
    with pytest.raises(SheetError, match="the cells holding values span"):
        read_sheet(write_raw_workbook(tmp_path / "c.xlsx", [("S", body)]), "c.xlsx", "S")


def test_an_early_date_time_keeps_its_fraction_of_a_second(tmp_path: Path) -> None:
    styles = ('<numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd hh:mm:ss.00"/></numFmts>'
              '<cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="164"/></cellXfs>')
    serial = (dt.datetime(1896, 8, 12, 10, 22, 22, 80_000) - dt.datetime(1899, 12, 30)) / dt.timedelta(days=1)
    body = f'<sheetData><row r="1"><c r="A1" s="1"><v>{serial!r}</v></c></row></sheetData>'
    path = write_raw_workbook(tmp_path / "f.xlsx", [("S", body)], styles=styles)
    assert read_sheet(path, "f.xlsx", "S").rows[0].values == (dt.datetime(1896, 8, 12, 10, 22, 22, 80_000),)


_RICH = '<r><rPr><b/></rPr><t>Example </t></r><r><t>richtext</t></r><rPh sb="0" eb="1"><t>ignored</t></rPh>'


def test_rich_text_runs_keep_the_spaces_at_their_ends_shared_or_inline(tmp_path: Path) -> None:
    body = ('<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c>'
            f'<c r="C1" t="inlineStr"><is>{_RICH}</is></c></row></sheetData>')
    parts = workbook_parts([("S", body)], shared_strings=["RICH", "plain"])
    parts["xl/sharedStrings.xml"] = parts["xl/sharedStrings.xml"].replace("<t>RICH</t>", _RICH)
    path = write_package(tmp_path / "r.xlsx", parts)
    assert read_sheet(path, "r.xlsx", "S").rows[0].values == ("Example richtext", "plain", "Example richtext")


def test_rich_text_far_down_a_long_sheet_is_still_read_whole(tmp_path: Path) -> None:
    body = _long_sheet(30_000, {29_000: f'<row r="29000"><c r="A29000" t="inlineStr"><is>{_RICH}</is></c></row>'})
    rows = read_sheet(write_raw_workbook(tmp_path / "l.xlsx", [("S", body)]), "l.xlsx", "S").rows
    assert rows[28_999].values == ("Example richtext",)


def test_two_parts_whose_names_differ_only_in_case_are_refused_not_read_as_an_empty_sheet(tmp_path: Path) -> None:
    parts = workbook_parts([("S", cells([["h1", "h2"], ["a", 1]]))], sheet_part="worksheets/Sheet{n}.xml")
    parts["xl/worksheets/sheet1.xml"] = workbook_parts([("S", "<sheetData/>")])["xl/worksheets/sheet1.xml"]
    path = write_package(tmp_path / "t.xlsx", parts)
    with pytest.raises(SheetError, match="differ only in case"):
        read_sheet(path, "t.xlsx", "S")
