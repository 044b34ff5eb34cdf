"""Helpers of the report tests: a small plan built purely with every kind of row."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from helpers.plan import Block
from loader.findings import Finding
from loader.places import CellRef
from loader.plan.decisions_pass import DECIDED
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.duplicates_pass import held_message
from loader.plan.model import HELD, Action, DroppedRecord, DuplicateHold, FieldChange, FieldOutcome, Plan
from loader.profile import load_profile
from loader.source.block_rows import LeftOut
from loader.source.records import DesiredRecord, Ref


def desired(block: str, entity: str, row: int, key: Sequence[str] = ("code",), pii: Sequence[str] = (),
            **fields: Any) -> DesiredRecord:
    cells = {n: CellRef("intake.xlsx", block, f"{'ABCDEFGH'[i]}{row}", row) for i, n in enumerate(fields)}
    return DesiredRecord(block, entity, tuple(fields[k] for k in key), fields,
                         CellRef("intake.xlsx", block, None, row), cells, frozenset(pii))


def small_plan() -> Plan:
    """A create, an update, an unchanged record, PII, a warning and an error."""
    live = {
        "school": [{"id": "s-1", "code": "SCI", "name": "Science", "type": "SCHOOL"},
                   {"id": "s-2", "code": "ENG", "name": "Old | Engineering", "type": "SCHOOL"}],
        "applicant": [{"id": "a-1", "external_id": "A1", "email_address": "old@example.com"}],
        "subject": [{"id": "u-1", "code": "MATH1", "name": "Maths", "access": "Restricted"}],
    }
    blocks = [
        Block("schools", "school", ("code",), (
            desired("schools", "school", 2, code="SCI", name="Science"),
            desired("schools", "school", 3, code="ENG", name="New | <b>Engineering</b>"),
            desired("schools", "school", 4, code="LAW", name="Law"),
        ), sheet="Schools"),
        Block("subjects", "subject", ("code",), (
            desired("subjects", "subject", 2, code="MATH1", name="Maths", access="Open"),
            desired("subjects", "subject", 3, code="PHYS1", name="Physics", parent=Ref("program", ("NOPE",))),
        ), sheet="Subjects"),
        Block("applicants", "applicant", ("external_id",), (
            desired("applicants", "applicant", 2, key=("external_id",), pii=("email_address",), external_id="A1",
                    email_address="new.secret@example.com"),
        ), sheet="Applicants"),
    ]
    return plan_of(blocks, live)


def plan_of(blocks: Sequence[Block], live: Mapping[str, Sequence[Mapping[str, Any]]]) -> Plan:
    """The plan of `blocks` against `live`, made as the report tests' plans are (a fixed header)."""
    return plan_changes(blocks, live, load_profile(), header=PlanHeader(
        "sandbox", "5.1.0", "http://127.0.0.1:1", fingerprints={"intake.xlsx": "sha256:" + "ab" * 32},
        created_at="2026-11-22T00:00:00+00:00"))


HOSTILE = "x | `tick` <script>alert(1)</script> [x](javascript:alert(1)) <!-- \r\n# head \x1b[31mred\x1b[0m"


def review_plan() -> Plan:
    """Every kind of row a reviewer meets: creates, updates, status paths, PII, an error and what it
    blocks, a row left out by errors (its live record blocked), records not in the source, hostile values."""
    bad_row = CellRef("intake.xlsx", "schools", None, 9)
    bad_cell = Finding("error", "bad-value", "name: too long", CellRef("intake.xlsx", "schools", "B9", 9))
    live = {
        "school": [{"id": "s-1", "code": "SCI", "name": "Science", "type": "SCHOOL"},
                   {"id": "s-2", "code": "ENG", "name": "Engineering", "type": "SCHOOL"},
                   {"id": "s-3", "code": "OLD", "name": "Old", "type": "SCHOOL"},
                   {"id": "s-4", "code": "GONE", "name": "Withdrawn", "type": "SCHOOL"}],
        "applicant": [{"id": "a-1", "external_id": "A1", "email_address": "old@example.com"}],
        "arrangement": [{"id": "r-1", "code": "ART1", "name": "Arr", "status": "DRAFT"}],
    }
    blocks = [
        Block("schools", "school", ("code",), (
            desired("schools", "school", 2, code="SCI", name="Science"),
            desired("schools", "school", 3, code="ENG", name="Faculty of Engineering"),
            desired("schools", "school", 4, code="LAW", name="Law"),
            desired("schools", "school", 5, code="EVIL", name=HOSTILE),
            desired("schools", "school", 6, code="K\r<!-- x", name="Carriage"),
        ), sheet="schools", findings=(bad_cell,), left_out=(LeftOut(bad_row, ("OLD",), (bad_cell,)),)),
        Block("courses", "course", ("code",), (
            desired("courses", "course", 2, code="BADC", name="Bad", parent=Ref("school", ("NOPE",))),
            desired("courses", "course", 3, code="GOODC", name="Good", parent=Ref("school", ("LAW",))),
        ), sheet="courses"),
        Block("programs", "program", ("code",), (
            desired("programs", "program", 2, code="P1", name="Waits", parent=Ref("course", ("BADC",))),
        ), sheet="programs"),
        Block("applicants", "applicant", ("external_id",), (
            desired("applicants", "applicant", 2, key=("external_id",), pii=("email_address",), external_id="A1",
                    email_address="new.secret@example.com"),
            desired("applicants", "applicant", 3, key=("external_id",), pii=("email_address",), external_id="A2",
                    email_address="brand.new.secret@example.com"),
        ), sheet="applicants"),
        Block("arrangements", "arrangement", ("code",), (
            desired("arrangements", "arrangement", 2, code="ART1", name="Arr", status="ACTIVE"),
            desired("arrangements", "arrangement", 3, code="ART2", name="New arrangement", status="ACTIVE"),
        ), sheet="arrangements"),
    ]
    return plan_changes(blocks, live, load_profile(), header=PlanHeader(
        "sandbox", "5.1.0", "http://127.0.0.1:1", fingerprints={"intake.xlsx": "sha256:" + "cd" * 32},
        created_at="2026-11-22T00:00:00+00:00"))


LONG = "Interdisciplinary-Environmental-Engineering"  # a long word that still fits at 80 columns


def every_row_plan() -> Plan:
    """Every kind of row the terminal view can show, with long keys, names and values: a conflict,
    a kept platform edit, a renumber, a retirement, a released and a kept dropped record (long
    names), a probable duplicate held, a row skipped by decision, a check error, a blocked row, creates and updates."""
    base = review_plan()
    schools = base.blocks[0]
    by_key = {r.key: r for r in schools.records}
    sci, eng, law = by_key[("SCI",)], by_key[("ENG",)], by_key[("LAW",)]
    hold = DuplicateHold("live school " + LONG, ("name", "code"), 0.97)
    outcome = FieldOutcome("name", sheet=LONG + " (sheet)", live=LONG + " (live)", last_loaded=LONG,
                           changed_by="u-1", changed_at=1_700_000_000_000, editor="Alexandria Montgomery-Whitfield")
    records = [
        replace(sci, action=Action.UPDATE, kept=(outcome,)),
        replace(eng, conflicts=(outcome,)),
        replace(eng, key=("ENG-" + LONG,), live_id="s-9", renamed_from=("ENG-OLD-" + LONG,)),
        replace(eng, live_id="s-3", key=("OLD",), retiring=True,
                changes=(FieldChange("status", "ACTIVE", "INACTIVE"),)),
        replace(law, key=("DUP-" + LONG,), action=Action.UNCHANGED, payload={}, changes=(), duplicate=hold,
                findings=(Finding("warning", HELD, held_message(hold), law.source),)),
        replace(law, key=("SKIP-" + LONG,), action=Action.UNCHANGED, payload={}, changes=(), findings=(Finding(
            "warning", DECIDED, f"new record: skipped by decision ({LONG} closes, Alexandria, 2026-11-20)",
            law.source),)),
        replace(law, key=("CHK-" + LONG,), findings=(Finding(
            "error", "check", "check failed: the name " + LONG + " is longer than the service allows", law.source),)),
        *[r for r in schools.records if r.key not in {("SCI",), ("ENG",)}],
    ]
    dropped = (DroppedRecord(("OLD",), "s-3", "2026-11-20T10:00:00+00:00", name=LONG),
               DroppedRecord(("REL-" + LONG,), "s-7", "2026-11-20T10:00:00+00:00", name=LONG + " Released"),
               DroppedRecord(("KEEP-" + LONG,), "s-8", None, name=LONG + " Kept"))
    block = replace(schools, records=tuple(records), dropped=dropped, released=(dropped[1],))
    return replace(base, blocks=(block, *base.blocks[1:]))
