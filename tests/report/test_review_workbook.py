"""The review workbook of `loader plan --review`: one row per proposed change, drop-downs, masked
personal values, hidden ids and digests, mode 0600, and the index `loader decide` checks rows against."""

from __future__ import annotations

import os
import stat
import zipfile
from dataclasses import replace
from pathlib import Path

import openpyxl
import pytest
from helpers.plan import Block
from helpers.report import desired, review_plan
from helpers.review import plan_with_conflict, sheet_rows
from openpyxl.utils import get_column_letter

from loader.history.decisions import CREATE
from loader.history.digests import Digester
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.digest import shown_digest
from loader.plan.masking import HIDDEN
from loader.plan.model import FieldRule
from loader.profile import load_profile
from loader.report.review_reading import read_review_workbook
from loader.report.review_rows import CHANGED, HEADER, MAX_WIDTH, MIN_WIDTH, review_rows
from loader.report.review_sheets import LEADING_WIDTHS
from loader.report.review_workbook import write_review_workbook

DATA_KEY = b"k" * 32



def test_one_row_per_changed_field_per_status_step_and_per_created_record_existing_records_first() -> None:
    rows = review_rows(review_plan())
    summary = [(r.kind, r.block, r.record, r.field, r.live, r.sheet) for r in rows]
    assert summary[:4] == [
        ("update", "schools", "ENG", "name", "Engineering", "Faculty of Engineering"),
        ("update", "applicants", "A1", "email_address", HIDDEN, CHANGED),
        ("status", "arrangements", "ART1", "status", "DRAFT", "READY"),
        ("status", "arrangements", "ART1", "status", "READY", "ACTIVE"),
    ]
    assert [r.kind for r in rows[4:]] == ["create"] * 6 + ["status", "status"]  # a create, then its steps
    assert ("create", "schools", "LAW", CREATE, None, "code: LAW\nname: Law") in summary
    blocked = {"BADC", "P1", "OLD"}  # an error, what depends on it, a row left out: nothing proposed
    assert not blocked & {r.record for r in rows}
    assert len({r.row_id for r in rows}) == len(rows)
    assert all(r.row_id.startswith(shown_digest(review_plan())[7:19] + "-") for r in rows)


def test_the_rule_column_names_the_mapping_line_of_the_field() -> None:
    plan = review_plan()
    rule = FieldRule("name", "mappings/schools.yaml:12", "name ← column 'Name'")
    blocks = tuple(replace(b, field_rules=(rule,)) if b.name == "schools" else b for b in plan.blocks)
    rows = review_rows(replace(plan, blocks=blocks))
    assert rows[0].rule == "mappings/schools.yaml:12  name ← column 'Name'"


def test_the_workbook_is_private_from_its_first_byte_and_holds_no_personal_value(tmp_path: Path) -> None:
    path = tmp_path / "review.xlsx"
    path.write_bytes(b"old")
    os.chmod(path, 0o644)  # an existing file keeps no wider mode
    write_review_workbook(review_plan(), path, Digester(frozenset({"applicant"}), DATA_KEY))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with zipfile.ZipFile(path) as package:
        text = b"".join(package.read(name) for name in package.namelist())
    assert b"secret" not in text and b"example.com" not in text


def test_the_sheet_has_a_frozen_header_filters_fitting_widths_drop_downs_and_hidden_ids(tmp_path: Path) -> None:
    write_review_workbook(review_plan(), tmp_path / "review.xlsx")
    book = openpyxl.load_workbook(tmp_path / "review.xlsx")
    sheet = book["Review"]
    assert [c.value for c in sheet[1]] == list(HEADER)
    assert sheet.freeze_panes == "C2"  # the header, and the block and record columns
    assert sheet.auto_filter.ref == f"A1:M{sheet.max_row}"
    widths = {letter: sheet.column_dimensions[letter].width for letter in "ABCDEFGHIJKLM"}
    assert all(MIN_WIDTH <= w <= MAX_WIDTH for w in widths.values())
    assert widths["F"] == LEADING_WIDTHS["proposed value"]  # the hostile create's long text: capped, wrapped
    assert sheet["F6"].alignment.wrap_text
    assert widths["A"] < widths["K"]  # "arrangements" is narrower than a place
    assert sheet.column_dimensions["L"].hidden and sheet.column_dimensions["M"].hidden
    assert not sheet.column_dimensions["G"].hidden
    lists = [v for v in sheet.data_validations.dataValidation if v.type == "list"]
    assert [(v.formula1, str(v.sqref)) for v in lists] == [('"apply,skip,defer"', f"G2:G{sheet.max_row}")]
    assert book["loader"].sheet_state == "hidden"


def test_the_decision_column_starts_within_120_character_widths_of_the_left_edge(tmp_path: Path) -> None:
    long = "A very long value that a spreadsheet cell holds " * 8
    plan = plan_changes([Block("a-block-with-a-long-name", "school", ("code",), (
        desired("a-block-with-a-long-name", "school", 2, code="K" * 40, name=long),
    ), sheet="Schools")], {"school": [{"id": "s-1", "code": "K" * 40, "name": long[::-1]}]}, load_profile(),
        header=PlanHeader("sandbox", "5.1.0", "http://x"))
    write_review_workbook(plan, tmp_path / "review.xlsx")
    sheet = openpyxl.load_workbook(tmp_path / "review.xlsx")["Review"]
    decision = HEADER.index("decision")
    assert [c.value for c in sheet[1]][decision] == "decision"
    left = sum(sheet.column_dimensions[get_column_letter(n)].width for n in range(1, decision + 1))
    assert left <= 120
    assert sheet.cell(2, HEADER.index("proposed value") + 1).alignment.wrap_text  # the long value: all there
    assert sheet.cell(2, HEADER.index("proposed value") + 1).value == long


def test_a_first_visible_sheet_explains_how_to_review_and_the_rows_print_one_page_wide(tmp_path: Path) -> None:
    write_review_workbook(review_plan(), tmp_path / "review.xlsx")
    book = openpyxl.load_workbook(tmp_path / "review.xlsx")
    assert book.sheetnames[:2] == ["How to review", "Review"] and book.active.title == "How to review"
    guide = "\n".join(str(v) for row in book["How to review"].iter_rows(values_only=True) for v in row if v)
    assert book["How to review"].sheet_state == "visible"
    for words in ("decision", "skip", "defer", "sheet (a conflict)", "loader decide review.xlsx", "current value"):
        assert words in guide
    sheet = book["Review"]
    assert sheet.page_setup.orientation == "landscape" and sheet.page_setup.fitToWidth == 1
    assert sheet.page_setup.fitToHeight == 0 and sheet.sheet_properties.pageSetUpPr.fitToPage
    assert sheet.print_title_rows == "$1:$1"  # the header on every page


def test_a_create_is_one_row_and_one_decision_whatever_the_kind_of_row_the_columns_are_the_same(
    tmp_path: Path,
) -> None:
    write_review_workbook(plan_with_conflict(), tmp_path / "review.xlsx")
    rows = sheet_rows(tmp_path / "review.xlsx")
    law = [r for r in rows if r["record"] == "LAW"]
    assert len(law) == 1 and law[0]["change"] == "new record" and law[0]["field"] == "(all fields)"
    assert law[0]["proposed value"] == "code: LAW\nname: Law" and law[0]["current value"] is None
    assert {r["change"] for r in rows} == {"conflict", "update", "status step", "new record"}
    assert all(set(r) == set(HEADER) for r in rows)


def test_every_cell_is_neutralised_against_formulas(tmp_path: Path) -> None:
    plan = plan_changes([Block("schools", "school", ("code",), (
        desired("schools", "school", 2, code="=1+1", name="@SUM(A1)"),
    ), sheet="Schools")], {"school": []}, load_profile(), header=PlanHeader("sandbox", "5.1.0", "http://x"))
    write_review_workbook(plan, tmp_path / "review.xlsx")
    rows = sheet_rows(tmp_path / "review.xlsx")
    assert rows[0]["record"] == "'=1+1" and rows[0]["proposed value"] == "code: =1+1\nname: @SUM(A1)"
    sheet = openpyxl.load_workbook(tmp_path / "review.xlsx")["Review"]
    assert all(cell.data_type != "f" for row in sheet.iter_rows() for cell in row)


def test_digests_are_the_historys_of_the_proposed_value_and_personal_keys_are_tokens() -> None:
    digester = Digester(frozenset({"applicant"}), DATA_KEY)
    rows = {(r.record, r.field): r for r in review_rows(review_plan(), digester)}
    eng = rows[("ENG", "name")]
    assert eng.digest == digester.value("school", ("ENG",), "name", "Faculty of Engineering")
    assert eng.key_token == '["ENG"]'
    applicant = rows[("A1", "email_address")]
    assert applicant.key_token == digester.key_token("applicant", ("A1",)) and "A1" not in applicant.key_token
    assert applicant.digest == digester.value("applicant", ("A1",), "email_address", "new.secret@example.com")


def test_without_the_history_key_a_personal_change_has_no_digest() -> None:
    rows = {(r.record, r.field): r for r in review_rows(review_plan())}
    assert rows[("A1", "email_address")].digest == "" and rows[("A1", "email_address")].key_token == ""
    assert rows[("ENG", "name")].digest != ""


def test_conflicts_come_first_and_offer_sheet_or_platform(tmp_path: Path) -> None:
    plan = plan_with_conflict()
    rows = review_rows(plan)
    assert (rows[0].kind, rows[0].record, rows[0].live, rows[0].sheet) == ("conflict", "SCI", "Platform name",
                                                                             "Sheet name")
    assert rows[0].choices == ("sheet", "platform")
    assert rows[0].digest == Digester().value("school", ("SCI",), "name", "Sheet name")
    personal = rows[1]  # a personal field's conflict: masked, and no value to digest
    assert (personal.kind, personal.record, personal.live, personal.sheet, personal.digest) == (
        "conflict", "A1", None, CHANGED, "")
    write_review_workbook(plan, tmp_path / "review.xlsx")
    sheet = openpyxl.load_workbook(tmp_path / "review.xlsx")["Review"]
    lists = [(v.formula1, str(v.sqref)) for v in sheet.data_validations.dataValidation if v.type == "list"]
    assert lists == [('"sheet,platform"', "G2:G3"), ('"apply,skip,defer"', f"G4:G{sheet.max_row}")]


def test_a_workbook_read_back_untouched_has_no_decision_and_names_its_plan(tmp_path: Path) -> None:
    plan = review_plan()
    write_review_workbook(plan, tmp_path / "review.xlsx")
    reviewed = read_review_workbook(tmp_path / "review.xlsx")
    assert reviewed.rows == ()
    assert reviewed.plan_digest == shown_digest(plan) and reviewed.environment == "sandbox"
    assert [e.row_id for e in reviewed.index] == [r.row_id for r in review_rows(plan)]


@pytest.mark.parametrize("hostile", ["-leading dash", "=HYPERLINK(1)", "_x0041_ literal", "a\rb"])
def test_ids_and_digests_read_back_exactly_whatever_they_begin_with(tmp_path: Path, hostile: str) -> None:
    plan = plan_changes([Block("schools", "school", ("code",), (
        desired("schools", "school", 2, code=hostile, name="N"),
    ), sheet="Schools")], {"school": []}, load_profile(), header=PlanHeader("sandbox", "5.1.0", "http://x"))
    write_review_workbook(plan, tmp_path / "review.xlsx")
    entry = read_review_workbook(tmp_path / "review.xlsx").index[0]
    row = review_rows(plan)[0]
    assert (entry.key, entry.digest, entry.field) == (row.key_token, row.digest, CREATE)
