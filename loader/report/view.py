"""What every plan report shows, computed once: per-block counts, record labels, value text.

Renderers (terminal, Markdown, HTML) format these; none of them decides what a plan means.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from loader.findings import Finding
from loader.plan.masking import HIDDEN
from loader.plan.model import Action, BlockPlan, Plan, RecordPlan


@dataclass(frozen=True)
class BlockCounts:
    create: int
    update: int
    unchanged: int
    not_in_source: int
    warnings: int
    errors: int

    @property
    def changed(self) -> int:
        return self.create + self.update


def counts(block: BlockPlan) -> BlockCounts:
    """Counts of one block; a record with errors counts as an error, not as its action."""
    ok = [r for r in block.records if not r.errors]
    return BlockCounts(
        create=sum(1 for r in ok if r.action is Action.CREATE),
        update=sum(1 for r in ok if r.action is Action.UPDATE),
        unchanged=sum(1 for r in ok if r.action is Action.UNCHANGED),
        not_in_source=block.not_in_source,
        warnings=sum(len(r.warnings) for r in block.records) + sum(f.severity == "warning" for f in block.findings),
        errors=sum(1 for r in block.records if r.errors) + sum(f.severity == "error" for f in block.findings),
    )


def totals(plan: Plan) -> BlockCounts:
    each = [counts(b) for b in plan.blocks]
    plan_warnings = sum(f.severity == "warning" for f in plan.findings)
    plan_errors = sum(f.severity == "error" for f in plan.findings)
    return BlockCounts(
        create=sum(c.create for c in each),
        update=sum(c.update for c in each),
        unchanged=sum(c.unchanged for c in each),
        not_in_source=sum(c.not_in_source for c in each),
        warnings=sum(c.warnings for c in each) + plan_warnings,
        errors=sum(c.errors for c in each) + plan_errors,
    )


def changed_records(block: BlockPlan) -> list[RecordPlan]:
    """Records a reviewer must read: creates, updates, and any record with findings."""
    return [r for r in block.records if r.has_changes or r.findings]


def label(record: RecordPlan) -> str:
    """The record as a reviewer names it: its key values."""
    return "/".join(str(k) if not isinstance(k, list) else "/".join(map(str, k)) for k in record.key)


def action_word(record: RecordPlan) -> str:
    if record.errors:
        return "error"
    return record.action.value


def value_text(value: Any) -> str:
    """A value as JSON text (strings quoted), a masked PII value as ‹hidden›."""
    if value == HIDDEN:
        return HIDDEN
    if value is None:
        return "null"
    return json.dumps(value, ensure_ascii=False, default=str)


def all_findings(plan: Plan) -> Iterator[tuple[str, Finding]]:
    """(context, finding) for every finding, plan-level first, then by block and record."""
    for f in plan.findings:
        yield "", f
    for b in plan.blocks:
        for f in b.findings:
            yield b.name, f
        for r in b.records:
            for f in r.findings:
                yield r.ref, f


def status_text(record: RecordPlan) -> str:
    """The status updates in order: `READY → ACTIVE`, or `after the create: READY → ACTIVE`."""
    steps = " → ".join(record.status_path)
    return f"after the create: {steps}" if record.action is Action.CREATE else steps
