"""References in every report are shown by the target's key (`parent: school ENG`), not by its id; an id
only where the plan knows no key for it, and then said as one (`id p-9`)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from helpers.plan import Block
from helpers.report import desired, plan_of

from loader.history.digests import Digester
from loader.plan.model import FieldOutcome, PendingId, Plan
from loader.report.html import render_html
from loader.report.markdown import render
from loader.report.references import ReferenceNames
from loader.report.review_rows import review_rows
from loader.report.terminal import render_text
from loader.source.records import Ref


def _plan() -> Plan:
    """C1 moves from school ENG (live, not managed here) to SCI, C2 from a program no block names to SCI,
    C3 is created under LAW, a school this plan creates."""
    live: dict[str, list[dict[str, Any]]] = {
        "school": [{"id": "s-1", "code": "SCI", "name": "Science", "type": "SCHOOL"},
                   {"id": "s-2", "code": "ENG", "name": "Engineering", "type": "SCHOOL"}],
        "course": [{"id": "c-1", "code": "C1", "name": "One", "parent": {"id": "s-2"}, "type": "COURSE"},
                   {"id": "c-2", "code": "C2", "name": "Two", "parent": {"id": "p-9"}, "type": "COURSE"}],
    }
    blocks = [
        Block("schools", "school", ("code",), (
            desired("schools", "school", 2, code="SCI", name="Science"),
            desired("schools", "school", 3, code="LAW", name="Law"),  # ENG: live, not managed here
        ), sheet="schools"),
        Block("courses", "course", ("code",), (
            desired("courses", "course", 2, code="C1", name="One", parent=Ref("school", ("SCI",))),
            desired("courses", "course", 3, code="C2", name="Two", parent=Ref("school", ("SCI",))),
            desired("courses", "course", 4, code="C3", name="Three", parent=Ref("school", ("LAW",))),
        ), sheet="courses"),
    ]
    return plan_of(blocks, live)


def _with_outcomes() -> Plan:
    """`_plan` with, as the three-way compare makes them from ids, a conflict on C1's parent (sheet SCI,
    live ENG, last loaded SCI) and a kept platform edit on C2's (live: a program no block names)."""
    plan = _plan()
    conflict = FieldOutcome("parent", sheet={"id": "s-1"}, live={"id": "s-2"}, last_loaded={"id": "s-1"},
                            changed_by="staff")
    kept = FieldOutcome("parent", sheet={"id": "s-1"}, live={"id": "p-9"}, changed_by="staff")
    conflicts, kept_edits = {"courses/C1": (conflict,)}, {"courses/C2": (kept,)}
    blocks = [replace(b, records=tuple(replace(r, conflicts=conflicts.get(r.ref, ()), kept=kept_edits.get(r.ref, ()))
                                       for r in b.records)) for b in plan.blocks]
    return replace(plan, blocks=tuple(blocks))


CONFLICT = "conflict, held: parent: live school ENG, sheet school SCI, last loaded school SCI"
KEPT = "kept platform edit: parent: live id p-9 kept (sheet school SCI)"


def test_an_update_of_a_reference_shows_the_targets_keys() -> None:
    text = render_text(_plan(), width=200)
    assert 'parent: "ENG" → "SCI"' in text and "s-1" not in text and "s-2" not in text


def test_the_terminal_shows_conflicts_and_kept_edits_of_references_by_key() -> None:
    text = render_text(_with_outcomes(), width=200)
    assert CONFLICT in text and KEPT in text
    assert "s-1" not in text and "s-2" not in text


def test_the_markdown_shows_conflicts_and_kept_edits_of_references_by_key() -> None:
    text = render(_with_outcomes())
    assert CONFLICT in text.replace("\\_", "_") and KEPT in text
    assert not re.search(r"\bs-[12]\b", text) and "PendingId" not in text


def test_the_html_report_shows_conflicts_of_references_by_key() -> None:
    text = render_html(_with_outcomes())
    assert CONFLICT in text and KEPT in text
    assert '\\"id\\"' not in text  # no `{"id": …}` in the page's data


def test_the_review_workbook_shows_a_conflict_of_a_reference_by_key_and_digests_the_id() -> None:
    plain = review_rows(_with_outcomes())
    conflict = next(r for r in plain if r.kind == "conflict")
    assert (conflict.record, conflict.live, conflict.sheet) == ("C1", "school ENG", "school SCI")
    digests = Digester(frozenset()).record("course", ("C1",))
    assert conflict.digest == digests.value("parent", {"id": "s-1"})


def test_a_reference_to_a_record_this_plan_creates_is_named_by_its_key() -> None:
    names = ReferenceNames(_plan())
    assert str(names.shown({"id": PendingId("schools/LAW")})) == "school LAW"
    assert str(names.shown("s-2")) == "school ENG"
    assert str(names.shown({"id": "x-0"})) == "id x-0"
    assert names.shown("ENG") == "ENG"  # a text is not an id
