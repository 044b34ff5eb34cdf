"""The Markdown report: golden sample, deterministic, folded, split into complete parts, PII masked.

Regenerate the golden file after an intended change of the report or the samples with
    REGENERATE_GOLDEN=1 pytest tests/report/test_report_markdown.py
and review the diff of tests/golden/sample-plan.md like any other change.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from helpers.plan import REPO, SAMPLE_MAPPINGS, SAMPLE_SEED, plan_against
from helpers.report import Block, desired
from markdown_it import MarkdownIt

from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.model import Plan
from loader.plan.plan_file import plan_json_text
from loader.profile import load_profile
from loader.report.markdown import PART_LIMIT, render, render_parts, write_markdown
from loader.sandbox.server import SandboxOptions, serve_in_thread
from loader.source.records import Ref

GOLDEN = REPO / "tests" / "golden" / "sample-plan.md"


@pytest.fixture(scope="module")
def two_sample_plans() -> tuple[Plan, Plan]:
    """The sample plan made twice against one sandbox seeded with last cycle's state."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        with serve_in_thread(SandboxOptions(seed=SAMPLE_SEED)) as sandbox:
            return plan_against(sandbox, SAMPLE_MAPPINGS).plan, plan_against(sandbox, SAMPLE_MAPPINGS).plan


def test_the_sample_plan_report_matches_the_golden_file(two_sample_plans: tuple[Plan, Plan]) -> None:
    text = render(two_sample_plans[0])
    if os.environ.get("REGENERATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


def test_planning_twice_gives_byte_identical_markdown_and_json_but_the_time(
    two_sample_plans: tuple[Plan, Plan],
) -> None:
    first, second = two_sample_plans
    assert render(first) == render(second)
    differing = [
        (a, b) for a, b in zip(plan_json_text(first).splitlines(), plan_json_text(second).splitlines(), strict=True)
        if a != b
    ]
    assert all('"created_at"' in a for a, _ in differing)


def test_the_header_names_environment_api_version_and_fingerprints_and_no_time(
    two_sample_plans: tuple[Plan, Plan],
) -> None:
    text = render(two_sample_plans[0])
    assert "- Environment: `sandbox`" in text and "- API version: `" in text
    assert "| `samples/intake-2027/curriculum.xlsx` | `" in text
    assert not re.search(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", text)
    assert "127.0.0.1" not in text


def _big_plan(n: int) -> Plan:
    records = tuple(desired("subjects", "subject", row, code=f"S{row:05d}", name=f"Subject number {row}",
                            custom_attributes={"Level": str(row % 5)}) for row in range(2, n + 2))
    blocks = [Block("schools", "school", ("code",), (desired("schools", "school", 2, code="SCI", name="Sci"),)),
              Block("subjects", "subject", ("code",), records)]
    return plan_changes(blocks, {}, load_profile(), header=PlanHeader("sandbox", "5.1.0"))


def test_a_long_report_is_split_into_complete_parts_with_the_summary_first(tmp_path: Path) -> None:
    plan = _big_plan(1_500)
    written = write_markdown(plan, tmp_path / "plan.md")
    assert [p.name for p in written[:3]] == ["plan.md", "plan.part2.md", "plan.part3.md"]
    texts = [p.read_text(encoding="utf-8") for p in written]
    for n, text in enumerate(texts, start=1):
        assert len(text) <= PART_LIMIT
        assert text.count("<details>") == text.count("</details>")
        assert text.startswith(f"# Plan for `sandbox` (part {n} of {len(texts)})")
    assert "| block | entity | create |" in texts[0]
    assert "This report is split into `plan.md`, `plan.part2.md`" in texts[0]
    assert all("| block | entity | create |" not in t for t in texts[1:])
    every_row = "".join(texts)
    assert all(f"`S{row:05d}`" in every_row for row in range(2, 1_502))
    assert texts[1].count("## subjects (subject)\n") == 1 and "## subjects (subject), continued" in texts[2]
    assert f"…, `plan.part{len(texts)}.md`." in texts[0]


def test_a_row_too_long_for_a_part_is_cut_with_a_note_and_every_part_fits(tmp_path: Path) -> None:
    # Every Markdown special, and prefixes of each length, so the cuts fall at each place among escapes.
    huge = "x|`<b>_\\" * 15_000
    schools = [desired("schools", "school", row, code=f"S{row}", name="y" * row + huge) for row in range(8)]
    schools += [desired("schools", "school", 10 + n, code=f"L{n}", name="Law",
                        parent=Ref("school", ("q" * n + "Q|\\`" * 20_000,))) for n in range(7)]
    schools += [desired("schools", "school", 20, code="ART", name="Arts")]
    plan = plan_changes([Block("schools", "school", ("code",), tuple(schools))], {}, load_profile(),
                        header=PlanHeader("sandbox", "5.1.0"))
    texts = [p.read_text(encoding="utf-8") for p in write_markdown(plan, tmp_path / "plan.md")]
    assert all(len(text) <= PART_LIMIT for text in texts)
    note = " … (cut: too long for this report; the full text is in plan.json and the HTML report) |"
    cut = [line.removesuffix(note) for text in texts for line in text.splitlines() if line.endswith(note)]
    assert len(cut) == 8 + 2 * 7  # the names; each unresolved reference in the errors and in its record's rows
    for kept in cut:
        assert kept.startswith("| ")
        assert kept.endswith("`") or (len(kept) - len(kept.rstrip("\\"))) % 2 == 0  # no escape cut in two
    assert sum(kept.startswith("| create | `S") and kept.endswith("`") for kept in cut) == 8  # code closed
    rendered = "".join(MarkdownIt("commonmark").enable("table").render(text) for text in texts)
    assert rendered.count("</code> … (cut: too long") == 8 and rendered.count("(cut: too long") == len(cut)
    every_row = "".join(texts)
    assert "| create | `ART` | name |" in every_row and "| error | `L0` |" in every_row
    assert json.dumps(huge, ensure_ascii=False)[1:-1] in plan_json_text(plan)


def test_a_shorter_report_removes_the_parts_an_earlier_one_left(tmp_path: Path) -> None:
    assert len(write_markdown(_big_plan(1_500), tmp_path / "plan.md")) > 2
    (tmp_path / "plan.partial-notes.md").write_text("mine", encoding="utf-8")
    assert write_markdown(_big_plan(3), tmp_path / "plan.md") == [tmp_path / "plan.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.md", "plan.partial-notes.md"]


def test_a_short_report_is_one_file_and_big_blocks_are_folded(plan: Plan, tmp_path: Path) -> None:
    assert [p.name for p in write_markdown(plan, tmp_path / "plan.md")] == ["plan.md"]
    assert "<details><summary>" not in render(plan).split("Input fingerprints")[1]
    folded = render_parts(_big_plan(30))[0]
    assert "<details><summary>30 records with changes or findings</summary>" in folded
    assert "<details><summary>1 records" not in folded


def test_table_cells_escape_pipes_and_html_and_pii_is_masked(plan: Plan) -> None:
    text = render(plan)
    assert '`"New \\| <b>Engineering</b>"`' in text
    for line in text.splitlines():
        if line.startswith("| update | `ENG`"):
            assert len(re.findall(r"(?<!\\)\|", line)) == 7
    assert "| update | `A1` | email\\_address | ‹hidden› | ‹hidden› |" in text
    assert "secret" not in text
