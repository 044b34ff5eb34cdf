from __future__ import annotations

import csv
from pathlib import Path

import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.safe_cells import (
    escape_xlsx_text,
    is_dangerous,
    safe_row,
    safe_value,
    set_safe_cell,
    unescape_xlsx_text,
)
from loader.source.readers.rows import unneutralised


@pytest.mark.parametrize("text", ["=1+2", "+61 400", "-5", "@SUM(A1)", "\t=cmd", "\r=cmd", '=HYPERLINK("x")'])
def test_text_that_could_be_a_formula_is_prefixed_with_a_quote(text: str) -> None:
    assert safe_value(text) == "'" + text


@pytest.mark.parametrize("value", ["Science", "", "a=b", " =x", 5, -5, 1.5, None, True])
def test_plain_text_and_non_text_values_are_left_alone(value: object) -> None:
    assert safe_value(value) == value


@settings(max_examples=100)
@given(st.text(max_size=20))
def test_no_safe_value_can_start_a_formula(text: str) -> None:
    value = safe_value(text)
    assert not is_dangerous(value)
    assert value.endswith(text)


def test_a_workbook_written_through_set_safe_cell_holds_no_formula(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    for column, value in enumerate(["=1+2", "@x", "plain", 7], start=1):
        set_safe_cell(sheet, 1, column, value)
    set_safe_cell(sheet, 2, 1, "bell\x07inside")
    path = tmp_path / "out.xlsx"
    workbook.save(path)
    reread = openpyxl.load_workbook(path).active
    values = [c.value for c in reread[1]]
    assert values == ["'=1+2", "'@x", "plain", 7]
    assert all(c.data_type != "f" for c in reread[1])
    assert reread["A2"].value == "bell_x0007_inside"  # the format's escape: calamine reads the bell back


def test_a_csv_row_written_safely_reads_back_neutralised(tmp_path: Path) -> None:
    path = tmp_path / "out.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerow(safe_row(["=1+2", "ok", -3]))
    with path.open(newline="", encoding="utf-8") as handle:
        assert next(csv.reader(handle)) == ["'=1+2", "ok", "-3"]


@settings(max_examples=300)
@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=30)
       | st.text(alphabet="_x0Dd5F'=\r\n\t-", max_size=20))
def test_escaping_and_neutralising_are_undone_exactly_by_reading(text: str) -> None:
    assert unescape_xlsx_text(escape_xlsx_text(text)) == text
    assert unneutralised(safe_value(text)) == text
    escaped = escape_xlsx_text(safe_value(text))
    assert not any(c in escaped for c in "\r\x00\x01\x1f\ufffe")


@pytest.mark.parametrize(("text", "written"), [
    ("Bourne\n\r", "Bourne\n_x000D_"),
    ("_x000D_", "_x005F_x000D_"),
    ("a_x005F_b", "a_x005F_x005F_b"),
    ("_xABCD\r", "_x005F_xABCD_x000D_"),
    ("snake_case", "snake_case"),
])
def test_control_characters_and_escape_lookalikes_are_escaped_as_the_format_defines(text: str, written: str) -> None:
    assert escape_xlsx_text(text) == written


@pytest.mark.parametrize(("text", "written"), [("'=1+1", "''=1+1"), ("''-5", "'''-5"), ("'quoted", "'quoted")])
def test_text_already_quoted_before_a_formula_character_gets_one_quote_more(text: str, written: str) -> None:
    assert safe_value(text) == written and unneutralised(written) == text
