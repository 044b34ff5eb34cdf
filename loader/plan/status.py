"""The status field and conditional fields: status paths, and fields allowed only when another has a value.

Pure. A status moves only along the profile's legal transitions, one update a step
(`RecordPlan.status_path`), or is sent with the create when the entity allows it; a field with
`only_when` may be set only when its condition field has the value the profile names.
"""

from __future__ import annotations

from typing import Any

from loader.findings import Finding
from loader.places import CellRef
from loader.plan.field_plan import FieldPlan
from loader.plan.model import FieldChange
from loader.plan.resolve import LiveRecord
from loader.profile import EntityProfile
from loader.source.records import DesiredRecord

ILLEGAL_MOVE = "illegal-status-change"  # the error of a desired status no legal path reaches from live's


def plan_status(entity: EntityProfile, desired: Any, live: LiveRecord | None, where: CellRef, out: FieldPlan) -> None:
    """The status steps from the live status (or the initial one) to `desired`, or an error at `where`."""
    rule = entity.status
    assert rule is not None
    if desired is None:
        return
    if desired not in rule.transitions:
        known = ", ".join(rule.transitions)
        message = f"{rule.field} {desired!r} is not one of {known}"
        out.add_finding(Finding("error", "unknown-status", message, where))
        return
    current = rule.initial if live is None else (live.get(rule.field) or rule.initial)
    if live is None and rule.on_create:
        out.payload[rule.field] = desired
        out.changes.append(FieldChange(rule.field, None, desired))
        return
    path = rule.path(current, desired)
    if path is None:
        allowed = ", ".join(rule.transitions.get(current, ())) or "none"
        out.add_finding(
            Finding("error", ILLEGAL_MOVE,
                    f"cannot move {entity.name} {rule.field} from {current} to {desired}: no legal path "
                    f"({current} can move to: {allowed})", where)
        )
        return
    out.status_path = path
    if live is None:
        out.changes.append(FieldChange(rule.field, None, desired))
    elif path:
        out.status_changed = True
        out.changes.append(FieldChange(rule.field, current, desired))


def check_only_when(
    record: DesiredRecord, entity: EntityProfile, name: str, live: LiveRecord | None, where: CellRef, out: FieldPlan
) -> None:
    """An error at `where` when field `name` is set but its condition field (desired, else live) has another value."""
    condition_field, required = entity.only_when[name]
    actual = record.fields.get(condition_field, (live or {}).get(condition_field))
    if actual != required:
        out.add_finding(
            Finding("error", "field-not-allowed",
                    f"{name} can only be set when {condition_field} is {required} (this {entity.name}'s "
                    f"{condition_field} is {actual})", where)
        )
