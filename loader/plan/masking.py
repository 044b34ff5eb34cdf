"""PII in reports: fields marked `pii: true` are shown as changed or unchanged, never by value.

Every renderer (terminal, Markdown, HTML, the `changes` of plan.json) shows a plan through
`masked_plan`. Payloads keep their values: `apply --plan` needs them, so plan.json is written 0600.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from loader.plan.model import BlockPlan, FieldChange, Plan, RecordPlan

HIDDEN = "‹hidden›"


def mask_value(value: Any) -> Any:
    """What a reviewer sees of a PII value: that there is one, not what it is."""
    return None if value is None else HIDDEN


def masked_change(change: FieldChange) -> FieldChange:
    if not change.pii:
        return change
    return replace(change, old=mask_value(change.old), new=mask_value(change.new))


def masked_record(record: RecordPlan) -> RecordPlan:
    if not any(c.pii for c in record.changes):
        return record
    return replace(record, changes=tuple(masked_change(c) for c in record.changes))


def masked_plan(plan: Plan) -> Plan:
    """The plan with every PII value in `changes` masked (payloads untouched)."""
    blocks = tuple(
        replace(b, records=tuple(masked_record(r) for r in b.records)) if _has_pii(b) else b for b in plan.blocks
    )
    return replace(plan, blocks=blocks)


def _has_pii(block: BlockPlan) -> bool:
    return any(c.pii for r in block.records for c in r.changes)
