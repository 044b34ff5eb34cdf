"""Reports that stay readable at any size: a first load of 17,000 records, a plan with nothing to do
over collections of 20,000 records, a cycle of 70 changes; each against golden Markdown and terminal
output (regenerate with REGENERATE_GOLDEN=1, then review the diff of tests/golden/ like any change).

The plans are plan values (tests/helpers/large_plans.py): planning 17,000 records would dominate the
test, and what is under test is what the renderers make of a plan.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers.large_plans import cycle, first_load, no_op
from helpers.plan import REPO
from markdown_it import MarkdownIt

from loader.plan.model import Plan
from loader.plan.plan_file import read_plan_json, write_plan_json
from loader.report.markdown import PART_LIMIT, render_parts
from loader.report.terminal import render_text

GOLDEN = REPO / "tests" / "golden"


def _matches_golden(name: str, texts: list[str]) -> None:
    paths = [GOLDEN / f"{name}.md"] + [GOLDEN / f"{name}.part{n}.md" for n in range(2, len(texts) + 1)]
    if os.environ.get("REGENERATE_GOLDEN"):
        for path, text in zip(paths, texts, strict=True):
            path.write_text(text, encoding="utf-8")
    assert texts == [path.read_text(encoding="utf-8") for path in paths]
    assert not (GOLDEN / f"{name}.part{len(texts) + 1}.md").exists()


def _terminal_matches_golden(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("REGENERATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def _well_formed(text: str) -> None:
    MarkdownIt("gfm-like").render(text)
    assert len(text) <= PART_LIMIT and text.count("<details>") == text.count("</details>")


@pytest.fixture(scope="module")
def first_load_plan() -> Plan:
    return first_load(17_000)


def test_a_first_load_of_17000_records_is_two_parts_with_the_one_update_in_part_1_before_any_create(
    first_load_plan: Plan,
) -> None:
    parts = render_parts(first_load_plan)
    assert len(parts) == 2
    for text in parts:
        _well_formed(text)
    first = parts[0]
    update = first.index("| 9999 | `U-LIVE` | name: `\"Statistics I\"` → `\"Statistics 1\"`<br>parent: ")
    assert update < first.index("## Creates") < first.index("| 2 | `C00002` |")
    assert "| `mappings/units.yaml:26` | name ← column 'Unit Name' | 1 | ████████████████████ | `U-LIVE` |" in first
    # what does not fit: profiles per field, a sample, and where the full list is
    faculty = "| `mappings/courses.yaml:18` | custom\\_attributes.Faculty ← column 'Faculty' | 12,000 | 4,000 | 3 |"
    assert faculty in first
    assert re.search(r"… and [\d,]+ more records to create: the HTML report \(`--html plan\.html`\) and plan\.json "
                     r"list them all\.", parts[1])
    assert "A sample of 10 of all 16,000" in parts[1] and "A sample of 10 of all 999" in parts[1]
    _matches_golden("first-load-17000", parts)


def test_the_terminal_shows_a_first_load_by_rule_and_at_most_50_records_a_block_existing_first(
    first_load_plan: Plan,
) -> None:
    text = render_text(first_load_plan)
    units = text[text.index("units (subject) · units.xlsx › Units"):]
    assert "  mappings/units.yaml:26  name ← column 'Unit Name'  1 record changed" in units
    assert "  mappings/units.yaml:25–31  999 records created, setting code, name, parent, access" in units
    assert units.index("~ update U-LIVE  row 9999") < units.index("+ create ")
    assert len(re.findall(r"^  [~+] ", text, re.MULTILINE)) == 100
    assert ("  … and 15,950 more: 15,950 to create; write them all with --report plan.md or --html plan.html"
            in text)
    assert "  … and 950 more: 950 to create; write them all" in units
    _terminal_matches_golden("first-load-17000", text)


def test_a_plan_with_nothing_to_do_over_20000_records_is_one_short_part() -> None:
    plan = no_op(20_000)
    parts = render_parts(plan)
    assert len(parts) == 1 and len(parts[0]) < 5_000
    _well_formed(parts[0])
    assert "No changes: the service already matches the source." in parts[0]
    assert "| units | subject | 0 | 0 | 20,000 | 20,000 |" in parts[0]  # not managed here: a count
    text = render_text(plan, width=80)
    assert text.count("\n") <= 3 and "No changes: 20,000 unchanged · 20,000 not managed here." in text
    _matches_golden("no-op-20000", parts)
    _terminal_matches_golden("no-op-20000", text)


def test_a_cycle_of_70_changes_lists_every_change_in_one_part() -> None:
    plan = cycle(70)
    parts = render_parts(plan)
    assert len(parts) == 1
    text = parts[0]
    _well_formed(text)
    changed = [r for r in plan.blocks[0].records if r.has_changes]
    assert len(changed) == 70 and all(f"`{r.key[0]}`" in text for r in changed)
    existing = text.index("#### Updates: 60 records, 59 fields (1 status move only)")
    dropped, made = text.index("#### Dropped from the source (1)"), text.index("## Creates")
    assert existing < dropped < made
    assert "| `U-OLD` | Old unit | `id-old` | 2026-03-01T10:00:00+00:00 | nothing written |" in text
    assert "|  | status steps the plan adds to reach the status (no mapping line) | 1 | █ | `U00008` |" in text
    assert "| name ← column 'Unit Name' | 53 | ████████████████████ |" in text  # a bar beside the count
    assert "X0" not in text  # not managed here: counted only
    terminal = render_text(plan)
    assert len(re.findall(r"^  [~+-] ", terminal, re.MULTILINE)) == 50  # every kind shown, updates first
    assert "- dropped U-OLD" in terminal and "+ create " in terminal
    assert "  … and 21 more: 21 to update; write them all" in terminal
    longer = render_text(plan, limit=100)
    assert "  - dropped U-OLD Old unit  id id-old, last loaded 2026-03-01T10:00:00+00:00  nothing written" in longer
    assert longer.index("~ update U00068") < longer.index("- dropped U-OLD") < longer.index("+ create ")
    _matches_golden("cycle-70", parts)
    _terminal_matches_golden("cycle-70", terminal)


def test_goldens_of_large_plans_are_deterministic(first_load_plan: Plan) -> None:
    assert render_parts(first_load_plan) == render_parts(first_load(17_000))


def test_a_plan_read_back_from_plan_json_renders_the_same(tmp_path: Path) -> None:
    plan = cycle(70)
    write_plan_json(plan, tmp_path / "plan.json")
    again = read_plan_json(tmp_path / "plan.json")
    assert again.blocks[0].field_rules == plan.blocks[0].field_rules
    assert again.blocks[0].dropped == plan.blocks[0].dropped
    assert render_parts(again) == render_parts(plan)
