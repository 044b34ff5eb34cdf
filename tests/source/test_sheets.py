"""Readers: xlsx/xlsm through calamine (cross-checked with openpyxl) and CSV, with cell provenance."""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import openpyxl
import pytest
from helpers.mapping import cache_formula_values, write_workbook
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loader.errors import SheetError
from loader.places import CellRef
from loader.safe_cells import safe_value, set_safe_cell
from loader.source.readers import SheetRow, column_letter, read_sheet


def _values(path: Path, sheet: str | None = None, **options: object) -> list[tuple[int, tuple[object, ...]]]:
    data = read_sheet(path, path.name, sheet, **options)  # type: ignore[arg-type]
    return [(r.number, r.values) for r in data.rows]


def test_numbers_keep_no_point_zero_and_text_keeps_leading_zeros_and_spaces(tmp_path: Path) -> None:
    path = write_workbook(tmp_path / "a.xlsx", {"S": [
        ["Code", "Num", "Text", "When"],
        ["00851", 101, "101 ", dt.date(2027, 2, 28)],
        ["\u00a0X", 1.5, None, dt.datetime(2027, 2, 28, 9, 30)],
    ]})
    assert _values(path, "S") == [
        (1, ("Code", "Num", "Text", "When")),
        (2, ("00851", 101, "101 ", dt.date(2027, 2, 28))),
        (3, ("\u00a0X", 1.5, None, dt.datetime(2027, 2, 28, 9, 30))),
    ]


def test_blank_rows_are_skipped_and_row_numbers_are_the_sheets(tmp_path: Path) -> None:
    path = write_workbook(tmp_path / "a.xlsx", {"S": [["H"], [], ["  "], ["\u00a0"], ["x"]]})
    assert _values(path, "S") == [(1, ("H",)), (5, ("x",))]


def test_merged_cells_give_the_top_left_value_to_every_cell_of_the_range(tmp_path: Path) -> None:
    path = tmp_path / "m.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    for row in (["School", "Course", "A", "B"], ["SCI", "BSC", "wide", None], [None, "BA", None, None]):
        sheet.append(row)
    sheet.merge_cells("A2:A3")
    sheet.merge_cells("C2:D2")
    book.save(path)
    assert _values(path, "Sheet") == [
        (1, ("School", "Course", "A", "B")),
        (2, ("SCI", "BSC", "wide", "wide")),
        (3, ("SCI", "BA")),
    ]


def test_numbers_displayed_with_leading_zeros_read_as_the_displayed_text(tmp_path: Path) -> None:
    path = tmp_path / "z.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Postcode", "Plain"])
    sheet.append([800, 800])
    sheet["A2"].number_format = "0000"
    book.save(path)
    assert _values(path, "Sheet")[1] == (2, ("0800", 800))


def test_formulas_give_cached_values_and_warn_when_there_is_none(tmp_path: Path) -> None:
    path = tmp_path / "f.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["A", "B", "C", "D"])
    sheet.append([2, "=A2*21", "=A2*2", '=CONCAT("x","y")'])
    book.save(path)
    cache_formula_values(path, {"B2": "42", "D2": "xy"})
    data = read_sheet(path, "f.xlsx", "Sheet")
    assert data.rows[1] == SheetRow(2, (2, 42, None, "xy"))
    assert [(str(cell), code, message.split(" (")[0]) for cell, code, message in data.warnings] == [
        ("f.xlsx › Sheet › C2", "formula-uncached", "formula has no cached value"),
    ]


def test_error_values_read_as_empty_with_a_warning_in_both_engines(tmp_path: Path) -> None:
    path = tmp_path / "e.xlsx"
    book = openpyxl.Workbook()
    book.active.append(["A", "B"])
    book.active.append(["=1/0", 1])
    book.save(path)
    cache_formula_values(path, {"A2": "#DIV/0!"}, kind="e")
    for engine in ("calamine", "openpyxl"):
        data = read_sheet(path, "e.xlsx", "Sheet", engine=engine)
        assert data.rows[1] == SheetRow(2, (None, 1))
        assert [(str(c), code, m) for c, code, m in data.warnings] == [
            ("e.xlsx › Sheet › A2", "cell-error", "the cell holds the error #DIV/0!, so it is read as empty"),
        ]


def test_hidden_sheets_are_read_when_named_and_a_missing_sheet_lists_the_sheets(tmp_path: Path) -> None:
    path = write_workbook(tmp_path / "h.xlsx", {"Visible": [["a"]], "Secret": [["b"]]}, hidden=["Secret"])
    assert _values(path, "Secret") == [(1, ("b",))]
    with pytest.raises(SheetError) as caught:
        read_sheet(path, "h.xlsx", "secret")
    assert caught.value.message == "no sheet named 'secret'; the sheets are: 'Visible', 'Secret'"
    assert caught.value.hint == "did you mean 'Secret'?"


def test_without_a_sheet_name_the_first_visible_sheet_is_read(tmp_path: Path) -> None:
    path = write_workbook(tmp_path / "v.xlsx", {"Notes": [["n"]], "Data": [["d"]]}, hidden=["Notes"])
    data = read_sheet(path, "v.xlsx")
    assert (data.sheet, data.rows[0].values) == ("Data", ("d",))


def test_xlsm_reads_like_xlsx(tmp_path: Path) -> None:
    path = write_workbook(tmp_path / "macro.xlsm", {"S": [["Code"], ["0042"]]})
    assert _values(path, "S") == [(1, ("Code",)), (2, ("0042",))]


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_csv_delimiters_are_sniffed_and_every_value_is_text(tmp_path: Path, delimiter: str) -> None:
    path = tmp_path / "a.csv"
    lines = [["Code", "Name", "Points"], ["00851", "Bachelor, of Arts" if delimiter != "," else "BA", "240"]]
    path.write_text("\n".join(delimiter.join(f'"{v}"' if "," in v else v for v in line) for line in lines) + "\n",
                    encoding="utf-8")
    rows = _values(path)
    assert rows[1][1][0] == "00851" and rows[1][1][2] == "240"
    assert len(rows[0][1]) == 3


def test_csv_with_bom_and_a_set_delimiter_and_encoding(tmp_path: Path) -> None:
    path = tmp_path / "b.csv"
    path.write_bytes("\ufeffCode;Name\nX1;Café\n\n;\n".encode())
    assert _values(path, delimiter=";") == [(1, ("Code", "Name")), (2, ("X1", "Café"))]
    legacy = tmp_path / "c.csv"
    legacy.write_bytes("Code,Name\nX1,Caf\xe9\n".encode("cp1252"))
    with pytest.raises(SheetError, match="cannot decode"):
        read_sheet(legacy, "c.csv")
    assert _values(legacy, encoding="cp1252")[1] == (2, ("X1", "Café"))


def test_csv_cells_are_addressed_like_a_sheet(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    data = read_sheet(path, "d.csv")
    assert data.cell(2, 1) == CellRef("d.csv", None, "B2", 2)
    assert str(data.cell(2, 1)) == "d.csv › B2"


_PULLED = ["=HYPERLINK(\"https://example.edu\", \"site\")", "-5", "+61 3 9999 0000", "@team", "'quoted"]


def test_text_the_loader_neutralised_reads_back_as_the_original_in_both_engines(tmp_path: Path) -> None:
    path = tmp_path / "pulled.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "S"
    for row, value in enumerate(["Value", *_PULLED], start=1):
        set_safe_cell(sheet, row, 1, value)  # as `loader pull` and the results workbook write them
    book.save(path)
    stored = [c.value for c in openpyxl.load_workbook(path)["S"]["A"]]
    assert stored[1:] == ["'=HYPERLINK(\"https://example.edu\", \"site\")", "'-5", "'+61 3 9999 0000", "'@team",
                          "'quoted"]
    expected = [(1, ("Value",)), *((n, (v,)) for n, v in enumerate(_PULLED, start=2))]
    assert _values(path, "S") == expected
    assert _values(path, "S", engine="openpyxl") == expected


def test_text_the_loader_neutralised_reads_back_as_the_original_from_csv(tmp_path: Path) -> None:
    path = tmp_path / "pulled.csv"
    with path.open("w", encoding="utf-8", newline="") as stream:
        csv.writer(stream).writerows([["Value", "Other"], *([safe_value(v), "x"] for v in _PULLED)])
    assert "'-5" in path.read_text(encoding="utf-8")
    assert _values(path, delimiter=",") == [
        (1, ("Value", "Other")), *((n, (v, "x")) for n, v in enumerate(_PULLED, start=2)),
    ]


def test_column_letters() -> None:
    assert [column_letter(i) for i in (0, 25, 26, 701, 702)] == ["A", "Z", "AA", "ZZ", "AAA"]


def test_a_file_that_is_not_a_workbook_is_a_sheet_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.xlsx"
    path.write_text("not a zip", encoding="utf-8")
    with pytest.raises(SheetError):
        read_sheet(path, "bad.xlsx", "S")


# openpyxl refuses control characters; "=" would start a formula.
_text = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=12).filter(lambda t: not t.startswith("="))
_cells = st.one_of(
    st.none(), _text, st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False), st.booleans(),
    st.dates(min_value=dt.date(1900, 3, 1), max_value=dt.date(2100, 1, 1)),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.lists(_cells, min_size=1, max_size=5), min_size=1, max_size=6))
def test_calamine_and_openpyxl_read_the_same_values(tmp_path: Path, rows: list[list[object]]) -> None:
    path = write_workbook(tmp_path / "p.xlsx", {"S": rows})
    fast = read_sheet(path, "p.xlsx", "S")
    slow = read_sheet(path, "p.xlsx", "S", engine="openpyxl")
    assert fast.rows == slow.rows
