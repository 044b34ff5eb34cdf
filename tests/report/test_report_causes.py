"""One finding per cause in the plan reports, while each row a cause touches stays blocked: grouping is
of what is shown, not of what is blocked (contract section 7)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import openpyxl
import pytest
from helpers.mapping import write_mapping, write_workbook

from loader.apply.results import Results
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.model import Plan
from loader.plan.plan_dict import plan_from_dict, plan_to_dict
from loader.profile import load_profile
from loader.report.html import render_html
from loader.report.machine import plan_document
from loader.report.markdown import render
from loader.report.results_workbook import write_results_workbook
from loader.report.shown_findings import shown_findings
from loader.report.terminal import render_text
from loader.source.sources import read_sources

ROWS = 40

MAPPING = """\
version: 1
source: cur.xlsx
entities:
  subjects:
    entity: subject
    sheet: Subjects
    key: [code]
    fields:
      code: Code
      name: Name
      custom_attributes:
        Credits: {column: Credits, type: integer, empty: skip}
"""


@pytest.fixture
def plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Plan:
    """40 subjects whose Credits cell holds text where the mapping says `type: integer`, and one without Credits."""
    monkeypatch.chdir(tmp_path)
    rows: list[list[str | None]] = [["Code", "Name", "Credits"]]
    rows += [[f"S{n}", f"Subject {n}", "ten"] for n in range(ROWS)]
    rows.append(["OK", "Fine", None])
    write_workbook(tmp_path / "cur.xlsx", {"Subjects": rows})
    write_mapping(tmp_path / "m.yaml", MAPPING)
    sources = read_sources([Path("m.yaml")], load_profile())
    return plan_changes(sources.blocks, {}, load_profile(), header=PlanHeader("sandbox"))


def test_the_reports_show_one_error_with_its_count_and_first_three_cells(plan: Plan) -> None:
    cause = ("custom_attributes.Credits: expected a whole number — 40 rows of cur.xlsx › Subjects, "
             "first: C2 (S0): 'ten'; C3 (S1): 'ten'; C4 (S2): 'ten'")
    text = render_text(plan, width=400)
    assert "Errors (40 in 1 cause)" in text and f"✗ m.yaml:12:9: {cause}" in text
    assert text.count("expected a whole number") == 1 + ROWS  # the cause once, and each blocked row
    markdown = render(plan)
    assert "## Errors (40 in 1 cause)" in markdown
    assert f"| m.yaml:12:9 | {cause}" in markdown.replace("\\", "")
    html = render_html(plan)
    assert "Errors (40 in 1 cause)" in html and html.count("expected a whole number —") == 1
    [finding] = plan_document(plan, 1)["findings"]
    assert finding["count"] == ROWS and finding["cells"] == ["C2 (S0): 'ten'", "C3 (S1): 'ten'", "C4 (S2): 'ten'"]


def test_each_row_of_a_grouped_error_is_still_blocked_in_plan_json_and_the_html_page(plan: Plan) -> None:
    data = plan_to_dict(plan)
    [block] = data["blocks"]
    blocked = block.get("blocked_rows", [])
    assert len(blocked) == ROWS and [r["key"] for r in blocked] == [[f"S{n}"] for n in range(ROWS)]
    assert [r["ref"] for r in block["records"]] == ["subjects/OK"]
    page = render_html(plan)
    records = json.loads(re.search(r'<script type="application/json" id="plan-data">(.*?)</script>', page,
                                   re.S).group(1))["blocks"][0]["records"]  # type: ignore[union-attr]
    assert sorted(r["k"] for r in records if r["a"] == "blocked") == sorted(f"S{n}" for n in range(ROWS))


def test_results_xlsx_still_marks_each_rows_cell(plan: Plan, tmp_path: Path) -> None:
    out = tmp_path / "results.xlsx"
    results = Results("sandbox", "local", (), block_sources={"subjects": ("cur.xlsx", "Subjects")})
    write_results_workbook(results, out, plan=plan, row_errors={b.name: b.findings for b in plan.blocks})
    sheet = openpyxl.load_workbook(out)["Subjects"]
    marked = [row for row in range(2, ROWS + 2) if sheet[f"C{row}"].comment is not None]
    assert marked == list(range(2, ROWS + 2))
    assert sheet[f"C{ROWS + 2}"].comment is None


def test_a_plan_read_back_from_plan_json_shows_the_same_causes(plan: Plan) -> None:
    again = plan_from_dict(json.loads(json.dumps(plan_to_dict(plan))))
    assert shown_findings(again) == shown_findings(plan)
    [shown] = shown_findings(again)
    assert shown.count == ROWS and str(shown.where) == "m.yaml:12:9"
