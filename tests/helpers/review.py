"""Helpers of the review workbook tests: a plan with a three-way conflict, as the planner will carry it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from helpers.report import review_plan
from loader.plan.model import Plan, RecordPlan


@dataclass(frozen=True)
class Conflict:
    """A three-way conflict as the planner will carry it (field, sheet, live, pii)."""

    field: str
    sheet: Any
    live: Any
    pii: bool = False


@dataclass(frozen=True)
class RecordWithConflicts(RecordPlan):
    conflicts: tuple[Conflict, ...] = ()


def plan_with_conflict() -> Plan:
    plan = review_plan()
    blocks = []
    for block in plan.blocks:
        records = tuple(
            RecordWithConflicts(**{n: getattr(r, n) for n in RecordPlan.__dataclass_fields__},
                                conflicts=(Conflict("name", "Sheet name", "Platform name"),))
            if r.ref == "schools/SCI" else r for r in block.records)
        blocks.append(replace(block, records=records))
    return replace(plan, blocks=tuple(blocks))
