"""Who changed a record in the platform, as reports name them (loader.yaml `report: {editors: ...}`).

A plan's kept platform edits and conflicts carry the id of the user who changed the field
(`FieldOutcome.changed_by`, from the live record's metadata or the history). With `editors: name`
(the default) the plan names them by first and last name, looked up once per plan through the
service's users (`loader.api.users`); `id` keeps the ids. An id the service does not know stays an
id. The digest does not cover who changed a field, so naming them changes no plan's digest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from loader.plan.model import FieldOutcome, Plan, RecordPlan


def editor_ids(plan: Plan) -> set[str]:
    """The ids of the users the plan's kept edits and conflicts name."""
    return {o.changed_by for r in plan.records() for o in (*r.kept, *r.conflicts) if o.changed_by}


def with_editor_names(plan: Plan, names: Mapping[str, str]) -> Plan:
    """`plan` with each user id of `names` replaced by the name given for it."""
    if not names:
        return plan
    blocks = []
    for block in plan.blocks:
        records = tuple(_named(r, names) if r.kept or r.conflicts else r for r in block.records)
        blocks.append(replace(block, records=records))
    return replace(plan, blocks=tuple(blocks))


def _named(record: RecordPlan, names: Mapping[str, str]) -> RecordPlan:
    def named(outcome: FieldOutcome) -> FieldOutcome:
        name = names.get(outcome.changed_by) if outcome.changed_by else None
        return outcome if name is None else replace(outcome, changed_by=name)

    return replace(record, kept=tuple(map(named, record.kept)), conflicts=tuple(map(named, record.conflicts)))
