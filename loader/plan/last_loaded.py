"""The value the loader last loaded into a field, for the conflicts a plan shows (contract section 11).

The three-way compare knows W only as a digest; a conflict's sheet value differs from it, so the
compare cannot say what the loader last wrote. The journals keep, for fields of entities without
personal data, the value after each write or confirmation (history format 2): the newest one of
the field is what W stands for. Only a plan with conflicts reads the journals; a field no journal
kept a value for (a history written before format 2, a personal field) stays "unknown".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from loader.history.store import History
from loader.plan.model import FieldOutcome, Plan, RecordPlan

_Wanted = tuple[str, str, str]  # entity, key token, field


def with_last_loaded(plan: Plan, history: History) -> Plan:
    """`plan` with each conflict whose last-loaded value it does not know given the journals' newest."""
    token = history.digester.key_token
    wanted = {(r.entity, token(r.entity, r.key), o.field) for r in plan.records() for o in r.conflicts
              if o.last_loaded is None and not o.pii}
    if not wanted:
        return plan
    found = history.last_values(wanted)
    if not found:
        return plan
    blocks = []
    for block in plan.blocks:
        records = tuple(_known(r, token(r.entity, r.key), found) if r.conflicts else r for r in block.records)
        blocks.append(replace(block, records=records))
    return replace(plan, blocks=tuple(blocks))


def _known(record: RecordPlan, token: str, found: Mapping[_Wanted, Any]) -> RecordPlan:
    def known(outcome: FieldOutcome) -> FieldOutcome:
        at = (record.entity, token, outcome.field)
        if outcome.last_loaded is not None or outcome.pii or at not in found:
            return outcome
        return replace(outcome, last_loaded=found[at])

    return replace(record, conflicts=tuple(map(known, record.conflicts)))
