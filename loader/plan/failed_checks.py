"""The records an error of an `every … has … via` check names, left out as blocked rows, as every
record-level error check leaves its records out.

`every` is judged once every block is read (`loader.source.checks.EveryIndex`), so its findings
come with the sources', as the plan's own. Here each error goes to the row of the record it names
(found by its source row and key), which is planned neither way, and the records depending on it
are held: `apply` refuses the plan, and `apply --partial` applies the rest, never that record.
"""

from __future__ import annotations

from dataclasses import replace

from loader.findings import Finding
from loader.plan.decisions_pass import hold_dependents
from loader.plan.model import BlockedRow, Plan, RecordPlan
from loader.source.records import display_value

EVERY = "check-every"


def _key_text(record: RecordPlan) -> str:
    """The key as the check's finding names it (`loader.source.checks.key_of`)."""
    return "/".join(str(display_value(part)) for part in record.key)


def with_every_errors_blocking(plan: Plan) -> Plan:
    """`plan` with each `every` error on the row of the record it names, that record left out, its
    dependants held."""
    failing = {(f.where, f.key): f for f in plan.findings if f.code == EVERY and f.severity == "error" and f.key}
    if not failing:
        return plan
    moved: set[int] = set()
    blocked: list[str] = []
    blocks = []
    for block in plan.blocks:
        records: list[RecordPlan] = []
        rows: list[BlockedRow] = []
        for record in block.records:
            finding: Finding | None = failing.get((record.source, _key_text(record)))
            if finding is None or id(finding) in moved:
                records.append(record)
                continue
            moved.add(id(finding))
            blocked.append(record.ref)
            rows.append(BlockedRow(record.source, record.row, record.key, record.live_id, (finding,)))
        if rows:  # the findings go with the block's, as a row's errors do
            block = replace(block, records=tuple(records), blocked_rows=(*block.blocked_rows, *rows),
                            findings=(*block.findings, *(f for row in rows for f in row.errors)))
        blocks.append(block)
    held = hold_dependents(blocks, blocked, "which fails an `every` check")
    return replace(plan, blocks=tuple(held), findings=tuple(f for f in plan.findings if id(f) not in moved))
