"""The Markdown report: golden sample, deterministic, folded, split into complete parts, PII masked.

Regenerate the golden files after an intended change of the report or the samples with
    REGENERATE_GOLDEN=1 pytest tests/report/test_report_markdown.py
and review the diff of tests/golden/sample-plan.md and sample-plan.txt like any other change.

Markdown is checked as GitHub would show it, with a real CommonMark renderer with GFM tables
(markdown-it-py): every part parses, every table row keeps its column count, hostile values stay text.
"""

from __future__ import annotations

import json
import os
import re
from html import unescape
from pathlib import Path

import pytest
from helpers.plan import REPO, SAMPLE_MAPPINGS, SAMPLE_SEED, plan_against
from helpers.report import HOSTILE, Block, desired, every_row_plan, review_plan
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.model import Plan
from loader.plan.plan_file import plan_json_text
from loader.profile import load_profile
from loader.report.markdown import PART_LIMIT, render, render_parts, write_markdown
from loader.report.markdown_text import CELL_LIMIT
from loader.report.rules import sample
from loader.report.terminal import render_text
from loader.report.view import clean, creates
from loader.sandbox.server import SandboxOptions, serve_in_thread
from loader.source.records import Ref

GOLDEN = REPO / "tests" / "golden" / "sample-plan.md"
GOLDEN_TEXT = REPO / "tests" / "golden" / "sample-plan.txt"


@pytest.fixture(scope="module")
def two_sample_plans() -> tuple[Plan, Plan]:
    """The sample plan made twice against one sandbox seeded with last cycle's state."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        with serve_in_thread(SandboxOptions(seed=SAMPLE_SEED)) as sandbox:
            return plan_against(sandbox, SAMPLE_MAPPINGS).plan, plan_against(sandbox, SAMPLE_MAPPINGS).plan


def test_the_sample_plan_report_matches_the_golden_file(two_sample_plans: tuple[Plan, Plan]) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        text = render(two_sample_plans[0])
        terminal = render_text(two_sample_plans[0])
    if os.environ.get("REGENERATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
        GOLDEN_TEXT.write_text(terminal, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")
    assert terminal == GOLDEN_TEXT.read_text(encoding="utf-8")
    assert render(two_sample_plans[1]) == text and render_text(two_sample_plans[1]) == terminal


def test_planning_twice_gives_byte_identical_markdown_and_json_but_the_time(
    two_sample_plans: tuple[Plan, Plan],
) -> None:
    first, second = two_sample_plans
    assert render(first) == render(second)
    differing = [
        (a, b) for a, b in zip(plan_json_text(first).splitlines(), plan_json_text(second).splitlines(), strict=True)
        if a != b
    ]
    # the time, and the seal over the whole text (which holds the time) when the two differ in it
    assert all('"created_at"' in a or '"sha256"' in a for a, _ in differing)


def test_the_header_names_environment_api_version_and_fingerprints_and_no_time(
    two_sample_plans: tuple[Plan, Plan],
) -> None:
    text = render(two_sample_plans[0])
    assert "- Environment: `sandbox`" in text and "- API version: `" in text
    assert "| `samples/intake-2027/curriculum.xlsx` | `" in text
    assert not re.search(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", text)
    assert "127.0.0.1" not in text


def _gfm(text: str) -> tuple[str, list[Token]]:
    """The HTML GitHub-flavoured Markdown makes of `text` (raw HTML allowed, as on GitHub), and its tokens."""
    md = MarkdownIt("gfm-like")
    tokens = md.parse(text)
    return md.renderer.render(tokens, md.options, {}), tokens


def _tables_keep_their_columns(tokens: list[Token]) -> int:
    """Every row of every table has as many cells as its header; the number of body rows.

    A GFM renderer pads or drops cells to the header's count, so this mostly counts rows (a line
    break in a cell would add one); that no cell is split or merged is checked on the cells' text
    by test_no_cell_value_breaks_a_table_or_becomes_markup_link_or_html.
    """
    rows, columns, cells = 0, 0, 0
    for token in tokens:
        if token.type == "tr_open":
            cells = 0
        elif token.type in ("th_open", "td_open"):
            cells += 1
        elif token.type == "tr_close":
            if columns == 0:
                columns = cells
            else:
                assert cells == columns
                rows += 1
        elif token.type == "table_close":
            columns = 0
    return rows


def test_every_kind_of_row_keeps_its_tables_columns_in_the_markdown() -> None:
    """Each line of a table has as many unescaped cell separators as its header (the raw text: a
    GFM renderer would pad or drop cells), with conflicts, renumbers, retirements and held rows."""
    text = render(every_row_plan())
    assert _tables_keep_their_columns(_gfm(text)[1]) > 0
    header = 0
    for line in text.splitlines():
        pipes = len(re.findall(r"(?<!\\)\|", line)) if line.startswith("|") else 0
        header = pipes if not header or not pipes else header
        assert pipes in (0, header), line


def _big_plan(n: int) -> Plan:
    records = tuple(desired("subjects", "subject", row, code=f"S{row:05d}", name=f"Subject number {row}",
                            custom_attributes={"Level": str(row % 5)}) for row in range(2, n + 2))
    blocks = [Block("schools", "school", ("code",), (desired("schools", "school", 2, code="SCI", name="Sci"),)),
              Block("subjects", "subject", ("code",), records)]
    return plan_changes(blocks, {}, load_profile(), header=PlanHeader("sandbox", "5.1.0"))


def test_a_long_report_is_two_complete_parts_the_creates_that_do_not_fit_by_profile_and_sample(
    tmp_path: Path,
) -> None:
    plan = _big_plan(3_000)
    written = write_markdown(plan, tmp_path / "plan.md")
    assert [p.name for p in written] == ["plan.md", "plan.part2.md"]
    texts = [p.read_text(encoding="utf-8") for p in written]
    for n, text in enumerate(texts, start=1):
        assert len(text) <= PART_LIMIT
        assert text.count("<details>") == text.count("</details>")
        assert text.startswith(f"# Plan for `sandbox` (part {n} of 2)")
        html, tokens = _gfm(text)
        _tables_keep_their_columns(tokens)
        assert html.count("<details>") == html.count("</details>")
    assert "| block | entity | create |" in texts[0] and "| block | entity | create |" not in texts[1]
    assert "This report is split into `plan.md`, `plan.part2.md`." in texts[0]
    every_row = "".join(texts)
    before, after = every_row.split("more records to create: the HTML report (`--html plan.html`) and plan.json")
    listed = re.findall(r"^\| (\d+) \| `S\d{5}`", before, re.MULTILINE)
    assert len(listed) > 500 and listed == [str(row) for row in range(2, 2 + len(listed))]
    assert before.endswith(f"… and {3_000 - len(listed):,} ")  # the creates as many as fit, in order
    assert "A sample of 10 of all 3,000 (those with the smallest hashes of their keys):" in after
    sampled = [r.key[0] for r in sample(creates(plan.blocks[1]))]
    assert re.findall(r"^\| \d+ \| `(S\d+)`", after, re.MULTILINE) == sampled
    assert "| code (no mapping line recorded) | 3,000 | 0 | 3,000 | `S00002` |" in texts[0]
    assert every_row.count("### subjects (subject)\n") == 1
    assert "#### subjects (subject): creates, continued" in texts[1]


def test_a_first_load_of_1000_records_of_six_fields_fits_in_two_parts() -> None:
    records = tuple(desired("subjects", "subject", row, code=f"SUBJ{row:04d}", name=f"Introduction to Topic {row}",
                            parent=Ref("program", ("BSC-STAT",)), access="Open",
                            custom_attributes={"Level": str(row % 5 + 1), "Credit Points": "6"})
                    for row in range(2, 1_002))
    blocks = [Block("programs", "program", ("code",), (desired("programs", "program", 2, code="BSC-STAT",
                                                                name="Statistics"),)),
              Block("subjects", "subject", ("code",), records)]
    plan = plan_changes(blocks, {}, load_profile(), header=PlanHeader("sandbox", "5.1.0"))
    parts = render_parts(plan)
    assert len(parts) <= 2 and all(len(p) <= PART_LIMIT for p in parts)
    # the summary's two blocks, the program, the subjects, and the creates' profiles (2 fields and 6)
    assert sum(_tables_keep_their_columns(_gfm(p)[1]) for p in parts) == 2 + 1 + 1_000 + 2 + 6


def test_a_long_value_is_cut_with_a_marker_and_every_part_fits(tmp_path: Path) -> None:
    huge = "x|`<b>_\\" * 15_000
    schools = [desired("schools", "school", row, code=f"S{row}", name="y" * row + huge) for row in range(8)]
    schools += [desired("schools", "school", 20, code="ART", name="Arts")]
    plan = plan_changes([Block("schools", "school", ("code",), tuple(schools))], {}, load_profile(),
                        header=PlanHeader("sandbox", "5.1.0"))
    texts = [p.read_text(encoding="utf-8") for p in write_markdown(plan, tmp_path / "plan.md")]
    assert len(texts) == 1 and len(texts[0]) < 20_000
    rows = [line for line in texts[0].splitlines() if re.match(r"\| \d", line) and "…✂`" in line]
    assert len(rows) == 8
    html, tokens = _gfm(texts[0])
    assert _tables_keep_their_columns(tokens) == 9 + 1 + 2  # the summary's one block, the profile's two fields
    assert "<b>" not in html and html.count("…✂</code>") == 8 + 1  # and the profile's longest name
    cut_cells = re.findall(r"<code>(y*x[^<]*)…✂</code>", html)
    assert len(cut_cells) == 9 and all(len(unescape(c)) == CELL_LIMIT - len("…✂") for c in cut_cells)
    assert json.dumps(huge, ensure_ascii=False)[1:-1] in plan_json_text(plan)


def test_a_shorter_report_removes_the_parts_an_earlier_one_left(tmp_path: Path) -> None:
    assert len(write_markdown(_big_plan(3_000), tmp_path / "plan.md")) == 2
    (tmp_path / "plan.partial-notes.md").write_text("mine", encoding="utf-8")
    assert write_markdown(_big_plan(3), tmp_path / "plan.md") == [tmp_path / "plan.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.md", "plan.partial-notes.md"]


def test_a_short_report_is_one_file_and_big_tables_are_folded(plan: Plan, tmp_path: Path) -> None:
    assert [p.name for p in write_markdown(plan, tmp_path / "plan.md")] == ["plan.md"]
    folds = re.findall(r"<details><summary>([^<]*)</summary>", render(plan).split("Input fingerprints")[1])
    assert folds and all(fold.endswith(" to create") for fold in folds)  # only the creates, always
    folded = render_parts(_big_plan(30))[0]
    assert "### Creates (30)\n\n<details><summary>30 records to create</summary>" in folded
    assert "<details><summary>1 records" not in folded


def test_records_are_rows_creates_with_a_column_per_field_updates_with_only_what_changes() -> None:
    text = render(review_plan())
    assert text.index("## Errors (3)") < text.index("## schools (school)")
    assert "| row | code | name |\n|--:|---|---|\n| 4 | `LAW` | `Law` |" in text
    assert '| 3 | `ENG` | name: `"Engineering"` → `"Faculty of Engineering"` |' in text
    assert "| 2 | `ART1` | status: `\"DRAFT\"` → `\"ACTIVE\"`<br>status path: READY → ACTIVE |" in text
    assert "| 3 | `ART2` | `New arrangement` | `ACTIVE` | status path: after the create: READY → ACTIVE |" in text
    # the source file once per block, relative; rows (and failing cells) per record
    assert text.count("`intake.xlsx › schools`") == 1 and "intake.xlsx › schools › row" not in text
    assert "| 2 (C2) | `BADC` | no school with code 'NOPE' in the source or live |" in text
    assert "| 2 | `P1` | blocked: depends on courses/BADC, which cannot be applied |" in text
    # a row left out by errors: its live record is blocked, not "not in source"
    assert "| 9 | `OLD` | name: too long |" in text
    # not managed here: counted only (plan.json and the HTML page list them)
    assert "GONE" not in text and "s-4" not in text and "1 not managed here" in text
    assert "| block | entity | create | update | unchanged | not managed here | blocked | errors |" in text  # no zeros
    assert "| schools | school | 3 | 1 | 1 | 1 | 1 | 1 |" in text  # ... not managed here, blocked, errors


def test_hostile_values_and_pii_stay_inert_in_github_flavoured_markdown() -> None:
    text = render(review_plan())
    html, tokens = _gfm(text)
    _tables_keep_their_columns(tokens)
    assert "<script" not in html and "<!--" not in html and "<a " not in html and "\x1b" not in html
    assert "\r" not in text and "\x1b" not in text
    assert "<h1>head" not in html and html.count("<h1>") == 1  # a line break in a value starts no heading
    assert "<code>K\\r&lt;!-- x</code>" in html  # the carriage return shown, not written raw
    evil = next(line for line in text.splitlines() if line.startswith("| 5 | `EVIL` |"))
    assert len(re.findall(r"(?<!\\)\|", evil)) == 4
    assert "secret" not in text and "old@example.com" not in text
    assert "| 2 | `A1` | email\\_address: ‹hidden› → ‹hidden› |" in text
    assert HOSTILE not in text


_SPECIALS = "|`<>[]()!*_~\\\r\n\x1b\u202e&#:/.- ahjsvw"


def _table_cells(tokens: list[Token]) -> list[list[str]]:
    """The text of every body cell of every table, as a reader sees it (code spans' content included)."""
    rows: list[list[str]] = []
    in_body = False
    for token in tokens:
        if token.type == "tbody_open":
            in_body = True
        elif token.type == "tbody_close":
            in_body = False
        elif in_body and token.type == "tr_open":
            rows.append([])
        elif in_body and token.type == "inline":
            rows[-1].append("".join(c.content for c in token.children or ()))
    return rows


def _as_code_span_shows(text: str) -> str:
    shown = clean(text).replace("`", "'")
    if len(shown) >= 2 and shown[0] == shown[-1] == " " and shown.strip(" "):
        return shown[1:-1]  # CommonMark strips one space each side of a code span
    return shown


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(st.sampled_from(list(_SPECIALS)) | st.characters(), min_size=1, max_size=40),
                min_size=1, max_size=4))
def test_no_cell_value_breaks_a_table_or_becomes_markup_link_or_html(values: list[str]) -> None:
    records = [desired("schools", "school", 3 + n, code=f"K{n}{v}", name=v) for n, v in enumerate(values)]
    plan = plan_changes([Block("schools", "school", ("code",), tuple(records), sheet="schools")], {},
                        load_profile(), header=PlanHeader("sandbox", "5.1.0"))
    _, tokens = _gfm(render(plan))
    creates = [row for row in _table_cells(tokens) if len(row) == 3 and row[0].isdigit()]
    assert creates == [[str(3 + n), _as_code_span_shows(f"K{n}{v}"), _as_code_span_shows(v)]
                       for n, v in enumerate(values)]
    inline = [child for t in tokens if t.children for child in t.children]
    assert not [t for t in tokens + inline if t.type in ("html_block", "html_inline", "link_open", "image")
                and "details" not in t.content]


def test_creates_are_folded_in_at_most_six_columns_and_masked_cells_keep_theirs(
    two_sample_plans: tuple[Plan, Plan],
) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        text = render(two_sample_plans[0])
    tables = re.findall(r"<summary>[\d,]+ records? to create</summary>\n\n(\| row \|.*?)\n\n", text, re.S)
    assert len(tables) == 7  # every block's creates, folded
    for table in tables:
        lines = table.splitlines()
        assert all(len(re.findall(r"(?<!\\)\|", line)) - 1 == len(re.findall(r"(?<!\\)\|", lines[0])) - 1 <= 6
                   for line in lines)
    applicants = next(t for t in tables if "external\\_id" in t)
    assert "| 8 | `A1000129` | ‹hidden› | ‹hidden› | ‹hidden› | ‹hidden›<br>`[\"Online\"]`<br>`Bangladesh` |" \
        in applicants
    assert _tables_keep_their_columns(_gfm(text)[1]) > 0
