"""Helpers of the review workbook tests: a plan with three-way conflicts, as the planner makes them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import openpyxl

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


def decide_row(path: Path, record: str, field: str, decision: str, reason: str) -> None:
    """Set a decision and a reason on the row of `record` and `field` (CREATE: a new record's row), as a
    reviewer would in openpyxl; a workbook of the previous release's layout too."""
    book = openpyxl.load_workbook(path)
    sheet = book["Review"]
    header = [c.value for c in sheet[1]]
    at = {name: header.index(name) + 1 for name in ("record", "field", "decision", "reason")}
    shown = "(all fields)" if field == "CREATE" and "change" in header else field  # a create's one row
    found = 0
    for row in range(2, sheet.max_row + 1):
        if (sheet.cell(row, at["record"]).value, sheet.cell(row, at["field"]).value) == (record, shown):
            sheet.cell(row, at["decision"]).value = decision
            sheet.cell(row, at["reason"]).value = reason
            found += 1
    assert found, f"no row of {record} {field} in {path}"
    book.save(path)


def sheet_rows(path: Path) -> list[dict[str, Any]]:
    """The review workbook's rows, each by its header's column names."""
    values = list(openpyxl.load_workbook(path)["Review"].iter_rows(values_only=True))
    return [dict(zip(values[0], row, strict=True)) for row in values[1:]]
