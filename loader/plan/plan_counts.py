"""What `loader apply` decides of a whole plan before its first write, as numbers: the records it
would write, the records in scope (`--max-changes P%`), the errors of its records, the entities a
change marks personal, and whether every record comes after those it needs.

`plan_counts` computes them from a plan; plan.json's seal records them (`loader.plan.plan_seal`),
so that a sealed plan is checked before its records are made and applied while they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from loader.plan.model import Action, BlockPlan, Plan


@dataclass(frozen=True)
class PlanCounts:
    """The figures of a plan the checks before its first write need (see the module docstring).

    `ordered`: every ref a record depends on or refers to is an earlier record's, and no ref is
    there twice (so no cycle and no missing dependency: records can be written as they are read)."""

    block_records: tuple[int, ...]
    record_errors: int
    changes: int
    changes_partial: int
    scope: int
    personal: tuple[str, ...]
    ordered: bool


def changes_to_apply(plan: Plan, partial: bool) -> int:
    """Records the apply would write (creates, updates, status steps), leaving out blocked ones."""
    return sum(1 for r in plan.records() if r.has_changes and not (r.blocked or (partial and r.errors)))


def records_in_scope(plan: Plan) -> int:
    """The records the project manages. A block planned with a history (section 10): its records
    with a history line, its creates and its records dropped from the source (not the live records
    no block loaded); any other block (no history, or none of its records has a line yet): the union
    of desired and live records, every record the source names plus those it does not ("not in source")."""
    return sum(_in_scope(block) for block in plan.blocks)


def _in_scope(block: BlockPlan) -> int:
    if block.mapping_file is not None and (block.dropped or any(r.history_line for r in block.records)):
        managed = sum(1 for r in block.records if r.history_line is not None or r.action is Action.CREATE)
        return managed + len(block.dropped)
    return len(block.records) + block.not_in_source


def plan_counts(plan: Plan) -> PlanCounts:
    return PlanCounts(
        block_records=tuple(len(block.records) for block in plan.blocks),
        record_errors=sum(len(r.errors) for r in plan.records()),
        changes=changes_to_apply(plan, False),
        changes_partial=changes_to_apply(plan, True),
        scope=records_in_scope(plan),
        personal=tuple(sorted({r.entity for r in plan.records() if any(c.pii for c in r.changes)})),
        ordered=is_ordered(plan),
    )


def is_ordered(plan: Plan) -> bool:
    """Every record after the records it depends on and refers to, and no ref twice."""
    seen: set[str] = set()
    for record in plan.records():
        if record.ref in seen or not seen.issuperset(record.depends_on) or not seen.issuperset(record.refers_to):
            return False
        seen.add(record.ref)
    return True
