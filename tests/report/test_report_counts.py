"""Counts as every plan report shows them: a heading counts what its table lists, the per-block
counts name kept platform edits and conflicts, and a count of one meets its noun in the singular."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date

from helpers.report import small_plan

from loader.commands.decide import decided_words
from loader.history.decisions import Decision, Kind
from loader.plan.model import Action, FieldOutcome, Plan
from loader.report.html import render_html
from loader.report.markdown import render
from loader.report.terminal import render_text
from loader.report.view import history_notes


def _held_plan() -> Plan:
    """The small plan with its unchanged school holding a kept platform edit and a conflict: one
    record listed among the changes to existing records that updates no field."""
    plan = small_plan()
    block = plan.blocks[0]
    held = FieldOutcome("name", sheet="Science", live="Sciences", seen=False)
    conflict = FieldOutcome("type", sheet="SCHOOL", live="FACULTY", last_loaded="SCHOOL")
    records = tuple(replace(r, kept=(held,), conflicts=(conflict,)) if r.action is Action.UNCHANGED else r
                    for r in block.records)
    return replace(plan, blocks=(replace(block, records=records), *plan.blocks[1:]))


def test_the_updates_heading_counts_the_records_it_lists_and_the_fields_they_change() -> None:
    text = render(_held_plan())
    schools = text[text.index("### schools"):text.index("### subjects")]
    assert "#### Updates: 2 records, 1 field (1 with kept platform edits or conflicts only)" in schools
    table = schools[schools.index("#### Updates"):]
    rows = [line for line in table.splitlines()[4:] if line.startswith("| ")]
    assert len(rows) == 2  # what the heading counts
    assert "#### Updates: 1 record, 1 field\n" in text  # the applicants: a plain update
    assert "#### Creates by field (1 record)" in text and "1 records" not in text


def test_the_per_block_counts_show_kept_edits_and_conflicts_where_a_block_has_them() -> None:
    plan = _held_plan()
    markdown = render(plan)
    assert "| block | entity | create | update | unchanged | kept edits | conflicts | blocked | warnings | errors |" \
        in markdown
    assert "| schools | school | 1 | 1 | 1 | 1 | 1 | 0 | 0 | 0 |" in markdown
    wide = render_text(plan, width=140)
    assert re.search(r"block +entity +create +update +unchanged +kept edits +conflicts +blocked", wide)
    assert re.search(r"schools +school +1 +1 +1 +1 +1 +0", wide)
    narrow = render_text(plan, width=80)
    assert "schools     1 create · 1 update · 1 unchanged · 1 kept edit · 1 conflict" in narrow
    # The closing line says them once, as what the plan holds back.
    assert "Plan: 1 to create · 2 to update · 2 unchanged · 1 blocked · 1 warning · 1 error;\n      1 conflict " \
           "held, 1 platform edit kept." in narrow
    html = render_html(plan)
    assert '<th class="num">kept edits</th><th class="num">conflicts</th>' in html
    plain = render(small_plan())  # none of them: no such columns
    assert "kept edits" not in plain and "| conflicts |" not in plain


def test_counts_of_one_are_singular() -> None:
    seen = FieldOutcome("name", sheet="A", live="B", seen=True)
    record = replace(_held_plan().blocks[0].records[0], kept=(seen,), conflicts=())
    assert history_notes(record) == ["1 kept platform edit or conflict shown before"]
    one = Decision("sandbox", "school", '["SCI"]', "name", "sha256:x", Kind.SHEET, "", "Ana", date(2026, 11, 1))
    assert decided_words([one]) == "1 decision (sheet: 1)"
    assert decided_words([one, replace(one, decision=Kind.SKIP), one]) == "3 decisions (skip: 1, sheet: 2)"
