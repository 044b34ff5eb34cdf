"""Helpers of the review workbook tests: a plan with three-way conflicts, as the planner makes them."""

from __future__ import annotations

from dataclasses import replace

from helpers.report import review_plan
from loader.plan.model import FieldOutcome, Plan


def plan_with_conflict() -> Plan:
    """`review_plan` with a conflict on school SCI's name, and one on applicant A1's personal e-mail
    (personal fields carry no values)."""
    plan = review_plan()
    conflicts = {"schools/SCI": (FieldOutcome("name", sheet="Sheet name", live="Platform name",
                                              last_loaded="Science", changed_by="staff"),),
                 "applicants/A1": (FieldOutcome("email_address", pii=True),)}
    blocks = []
    for block in plan.blocks:
        records = tuple(replace(r, conflicts=conflicts[r.ref]) if r.ref in conflicts else r for r in block.records)
        blocks.append(replace(block, records=records))
    return replace(plan, blocks=tuple(blocks))
