"""Who changed a record in the platform, as reports name them (loader.yaml `report: {editors: ...}`).

A plan's kept platform edits and conflicts carry the id of the user who changed the field
(`FieldOutcome.changed_by`, from the live record's metadata or the history): the id stays, as the
history records it. With `editors: name` (the default) or `email` the plan also names them
(`FieldOutcome.editor`: first and last name), looked up once per plan through the service's users
(`loader.api.users`); with `email` it adds their e-mail address (`editor_email`), which only the
reports written 0600 show (`without_emails` gives the plan the terminal shows). `id` keeps the ids.
An id the service does not know stays an id. The digest does not cover who changed a field, so
naming them changes no plan's digest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from loader.plan.model import FieldOutcome, Plan, RecordPlan


def editor_ids(plan: Plan) -> set[str]:
    """The ids of the users the plan's kept edits and conflicts name."""
    return {o.changed_by for r in plan.records() for o in (*r.kept, *r.conflicts) if o.changed_by}


def with_editor_names(plan: Plan, names: Mapping[str, str], emails: Mapping[str, str] | None = None) -> Plan:
    """`plan` with each user id of `names` named by the name given for it (and by the e-mail address
    of `emails`, where given)."""
    if not names and not emails:
        return plan

    def named(outcome: FieldOutcome) -> FieldOutcome:
        who = outcome.changed_by
        if who is None or (who not in names and not (emails and who in emails)):
            return outcome
        return replace(outcome, editor=names.get(who), editor_email=emails.get(who) if emails else None)

    return _each_outcome(plan, named)


def without_emails(plan: Plan) -> Plan:
    """`plan` naming editors by name only: what output that is not a 0600 file shows."""
    if not any(o.editor_email for r in plan.records() for o in (*r.kept, *r.conflicts)):
        return plan
    return _each_outcome(plan, lambda outcome: replace(outcome, editor_email=None))


def _each_outcome(plan: Plan, change: Callable[[FieldOutcome], FieldOutcome]) -> Plan:
    blocks = []
    for block in plan.blocks:
        records = tuple(_changed(r, change) if r.kept or r.conflicts else r for r in block.records)
        blocks.append(replace(block, records=records))
    return replace(plan, blocks=tuple(blocks))


def _changed(record: RecordPlan, change: Callable[[FieldOutcome], FieldOutcome]) -> RecordPlan:
    return replace(record, kept=tuple(map(change, record.kept)), conflicts=tuple(map(change, record.conflicts)))
