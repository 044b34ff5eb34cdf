"""One matched record against its history line: the three-way compare of every managed field.

Pure. `three_way_record` takes the record's two-way plan (`loader.plan.record`), the live record,
the sheet's record and its history line, and gives the plan section 10 asks for: per field
`loader.plan.three_way`'s verdict under the field's `on_platform_edit`, set-like lists element by
element, `custom_attributes` label by label; a kept platform edit and a conflict are taken out of
the payload (the record's other changes go ahead); fields found equal whose W is not live's are
confirmed; a field another block owns is refused unless the block takes it over.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from loader.findings import Finding
from loader.history.comparable import comparable
from loader.history.digests import RecordDigests
from loader.history.lines import FieldMark, HistoryLine, label_field, line_digest
from loader.live_records import updated_time, updated_user
from loader.plan.history_labels import LabelsCompare
from loader.plan.model import Action, FieldChange, FieldOutcome, RecordPlan
from loader.plan.record_work import (
    RecordContext,
    RecordWork,
    Who,
    field_outcome,
    first_change,
    masked,
    one_written,
    pending,
)
from loader.plan.status import ILLEGAL_MOVE
from loader.plan.three_way import Outcome, Policy, compare_set, compare_value
from loader.profile import EntityProfile
from loader.record_fields import CUSTOM
from loader.source.equality import same
from loader.source.records import DesiredRecord

TAKEN_OVER = "field-taken-over"  # the warning of a field a block takes over; its message starts "<field>: "


def three_way_record(
    plan: RecordPlan, live: Mapping[str, Any], desired: DesiredRecord | None, line: HistoryLine | None,
    digests: RecordDigests, entity: EntityProfile, context: RecordContext,
) -> RecordPlan:
    """The record's plan with its history line compared (`line` None: two-way, only confirmations)."""
    fingerprint = None if line is None else line_digest(line)
    if line is not None and _live_is_written(plan, live, desired, line, digests, entity):
        # `_compared` would find nothing to write, keep, hold or confirm: its result, made directly
        return replace(plan, history_line=fingerprint, kept=(), conflicts=(), confirmed=(), written_after=())
    return _compared(plan, live, desired, line, digests, entity, context, fingerprint)


def _compared(
    plan: RecordPlan, live: Mapping[str, Any], desired: DesiredRecord | None, line: HistoryLine | None,
    digests: RecordDigests, entity: EntityProfile, context: RecordContext, fingerprint: str | None,
) -> RecordPlan:
    """`three_way_record`, field by field."""
    work = RecordWork(plan)
    marks = dict(line.fields) if line is not None else {}
    who = (updated_user(live), updated_time(live))
    status = entity.status.field if entity.status is not None else None
    for name in _managed(desired, plan, entity):
        if name == CUSTOM:
            LabelsCompare(work, plan, desired, live, marks, digests, context, who).run()
            continue
        if name == status:
            _status(work, plan, name, desired, live, marks.get(name) if line is not None else None,
                    digests, context, who)
            continue
        mark = marks.get(name)
        pii = desired is not None and name in desired.pii
        set_like = name in entity.set_fields
        live_value = comparable(name, live.get(name), entity)
        if name not in work.payload:
            written = digests.written(name, live_value, as_set=set_like)
            if line is None or mark is None or mark.written != written:
                work.confirm(name, written, live_value, pii)
            continue
        sheet = work.payload[name]
        if pending(sheet) or line is None or mark is None:
            continue  # a record this plan creates, or no W: the sheet's value is written (two-way)
        sheet_value = comparable(name, sheet, entity)
        if _refused_by_owner(work, name, sheet_value, mark, digests, set_like, context, plan):
            continue
        policy = context.policies.get(name, Policy.KEEP)
        if set_like:
            _set_field(work, name, sheet_value, live_value, mark, policy, digests, who, pii, entity)
        else:
            _value_field(work, plan, name, (sheet, sheet_value), (live.get(name), live_value), mark, policy, digests,
                         context, who, pii)
    return _result(plan, work, fingerprint, digests, entity)


def _managed(desired: DesiredRecord | None, plan: RecordPlan, entity: EntityProfile) -> list[str]:
    """The fields the sheet manages on this record that an update may write, in a stable order."""
    names = set(desired.fields) if desired is not None else {c.field.split(".")[0] for c in plan.changes}
    skip = entity.read_only | entity.create_only | entity.immutable | entity.forbidden
    return sorted(n for n in names if n not in skip)


def _live_is_written(plan: RecordPlan, live: Mapping[str, Any], desired: DesiredRecord | None, line: HistoryLine,
                     digests: RecordDigests, entity: EntityProfile) -> bool:
    """Whether the two-way plan changes nothing and every field the sheet manages has a mark whose W
    is live's digest (a label, and the status when the sheet names one, also holding the sheet's
    value live): the most common record, untouched since its line. `three_way_record` then has
    nothing to do; this asks its questions in the order that settles the common case soonest."""
    if desired is None or plan.action is not Action.UNCHANGED or plan.status_path or plan.payload or plan.changes:
        return False
    marks = line.fields
    status = entity.status.field if entity.status is not None else None
    skip = entity.read_only | entity.create_only | entity.immutable | entity.forbidden  # as `_managed` skips
    for name in desired.fields:  # `_managed`'s fields, in any order: each is only asked
        if name in skip:
            continue
        if name == CUSTOM:
            if not _labels_written(desired.fields.get(CUSTOM) or {}, live.get(CUSTOM) or {}, marks, digests):
                return False
            continue
        if name == status:
            sheet = desired.fields.get(name)
            if sheet is None:
                continue
            if not same(sheet, live.get(name)) or (mark := marks.get(name)) is None \
                    or mark.written != digests.value(name, live.get(name)):
                return False
            continue
        mark = marks.get(name)
        if mark is None or mark.written != digests.written(name, comparable(name, live.get(name), entity),
                                                           as_set=name in entity.set_fields):
            return False
    return True


def _labels_written(sheet: Mapping[str, Any], live: Mapping[str, Any], marks: Mapping[str, FieldMark],
                    digests: RecordDigests) -> bool:
    """`_live_is_written` for `custom_attributes`: each label the sheet manages is live's, W live's digest."""
    for label, value in sheet.items():
        name = label_field(label)
        mark = marks.get(name)
        if mark is None or not same(value, live.get(label)) or mark.written != digests.value(name, live.get(label)):
            return False
    return True


def compared_despite_errors(plan: RecordPlan) -> bool:
    """Whether the record's only errors (what blocks it: not a record it depends on) are an illegal
    status move, which the compare may find is a platform edit to keep (a person deactivated the
    record): its other changes then go ahead."""
    errors = [f.code for f in plan.findings if f.severity == "error"]
    return bool(errors) and all(code == ILLEGAL_MOVE for code in errors)


def _status(work: RecordWork, plan: RecordPlan, name: str, desired: DesiredRecord | None, live: Mapping[str, Any],
            mark: FieldMark | None, digests: RecordDigests, context: RecordContext,
            who: Who) -> None:
    """The status field, three-way as any other: an update is the two-way plan's path (the
    executor's business, one legal step at a time); a kept platform edit or a conflict holds the
    path, and with it an illegal move back from the person's status."""
    if plan.action is Action.CREATE:
        return
    sheet = desired.fields.get(name) if desired is not None else next(
        (c.new for c in plan.changes if c.field == name), None)
    live_value = live.get(name)
    if sheet is None:
        return
    if same(sheet, live_value):
        written = digests.value(name, live_value)
        if mark is None or mark.written != written:
            work.confirm(name, written, live_value, False)
        return
    if mark is None:
        return  # no W: the sheet's status is moved to (two-way)
    verdict = compare_value(sheet, live_value, one_written(mark.written), context.policies.get(name, Policy.KEEP),
                            lambda v: digests.value(name, v))
    outcome = verdict.outcome
    if outcome is Outcome.CONFLICT \
            and context.decided_for_sheet(plan, name, digests.value(name, sheet), work.findings):
        outcome = Outcome.UPDATE
    if outcome is Outcome.UPDATE:
        return
    work.status_path, work.status_held = (), True
    work.changes.pop(name, None)
    work.found(outcome, field_outcome(name, sheet, live_value, mark, digests, sheet, who, False))


def _set_field(work: RecordWork, name: str, sheet: Any, live: Any, mark: FieldMark, policy: Policy,
               digests: RecordDigests, who: Who, pii: bool, entity: EntityProfile) -> None:
    """A set-like list element by element: the platform's added and removed elements kept under `keep`."""
    written = mark.written if isinstance(mark.written, frozenset) else frozenset({mark.written})
    verdict = compare_set(sheet, live, written, policy, lambda item: digests.element(name, item))
    if verdict.kept_added or verdict.kept_removed:
        by, at = first_change(mark, who)
        work.kept.append(FieldOutcome(name, masked(list(sheet or ()), pii), masked(list(live or ()), pii), None,
                                      by, at, pii))
    if verdict.written_after is not None:
        work.written_after[name] = verdict.written_after
    if verdict.outcome is Outcome.UPDATE:
        old = work.changes.get(name)
        work.payload[name] = _send_like(list(verdict.send), work.payload[name], name, entity)
        work.changes[name] = FieldChange(name, old.old if old else live, masked(list(verdict.send), pii), pii)
    else:
        work.hold(name)


def _send_like(values: list[Any], sent: Any, name: str, entity: EntityProfile) -> Any:
    """The set to send in the payload's form (references as the payload gave them)."""
    if name in entity.references and isinstance(sent, (list, tuple)) and any(isinstance(v, Mapping) for v in sent):
        by_id = {str(v["id"]): v for v in sent if isinstance(v, Mapping) and "id" in v}
        return [by_id.get(str(v), {"id": v}) for v in values]
    return values


def _value_field(work: RecordWork, plan: RecordPlan, name: str, sheet: tuple[Any, Any], live: tuple[Any, Any],
                 mark: FieldMark, policy: Policy, digests: RecordDigests, context: RecordContext, who: Who,
                 pii: bool) -> None:
    """A field of one value, three-way (`sheet` and `live`: each value as given and in the form W
    digests it): an update goes ahead; else the field is held, as a kept edit or a conflict."""
    (sheet_given, sheet_value), (live_given, live_value) = sheet, live
    verdict = compare_value(sheet_value, live_value, one_written(mark.written), policy,
                            lambda v: digests.value(name, v))
    outcome = verdict.outcome
    if outcome is Outcome.CONFLICT and not pii \
            and context.decided_for_sheet(plan, name, digests.value(name, sheet_given), work.findings):
        outcome = Outcome.UPDATE
    elif outcome is Outcome.UPDATE and verdict.written_after is not None:
        work.written_after[name] = verdict.written_after  # W of the sheet's value: `_result`'s, made once
    if outcome is Outcome.UPDATE:
        return
    work.hold(name)
    if outcome is not Outcome.UNCHANGED:
        work.found(outcome, field_outcome(name, sheet_given, live_given, mark, digests, sheet_value, who, pii))


def _refused_by_owner(work: RecordWork, name: str, sheet: Any, mark: FieldMark, digests: RecordDigests, set_like: bool,
                      context: RecordContext, plan: RecordPlan) -> bool:
    """A field another block owns, which this block would set to another value: an error naming the
    owner (unless `take_over: true`; blocks setting equal values share it)."""
    if context.owns(mark.owner):
        return False
    if digests.written(name, sheet, as_set=set_like) == mark.written:
        return False
    owner = mark.owner
    if context.take_over:
        work.findings.append(Finding("warning", TAKEN_OVER, f"{name}: taken over from block {owner.block!r} of "
                                     f"{owner.file} (take_over: true)", plan.source))
        return False
    work.hold(name)
    if context.gone is not None and context.gone(owner):  # a renamed file: `formerly` keeps its records
        message = (f"{name} is owned by block {owner.block!r} of {owner.file}, a mapping file this project no "
                   f"longer has: if block {plan.block!r} is that block renamed or moved, add `formerly: {{file: "
                   f"{owner.file}, block: {owner.block}}}` to it; else say `take_over: true` on it")
    else:
        message = (f"{name} is owned by block {owner.block!r} of {owner.file}, which last loaded another value: "
                   f"set the same value here, or say `take_over: true` on block {plan.block!r} to take the field "
                   "over")
    work.findings.append(Finding("error", "field-owned-elsewhere", message, plan.source))
    return True


def _result(plan: RecordPlan, work: RecordWork, fingerprint: str | None, digests: RecordDigests,
            entity: EntityProfile) -> RecordPlan:
    for name, value in work.payload.items():  # W of what is written, in the form W digests it
        if name != CUSTOM and name not in work.written_after and not pending(value):
            work.written_after[name] = digests.written(name, comparable(name, value, entity),
                                                       as_set=name in entity.set_fields)
    written_after = tuple((name, w if isinstance(w, str) else tuple(sorted(w)))
                          for name, w in sorted(work.written_after.items())
                          if name in work.payload or name in work.confirmed or name.startswith(f"{CUSTOM}."))
    changes = tuple(c for _, c in sorted(work.changes.items()))
    action = plan.action
    if action is not Action.CREATE:
        action = Action.UPDATE if work.payload or work.status_path else Action.UNCHANGED
    findings, blocked = plan.findings, plan.blocked
    if work.status_held:  # an illegal move back from the person's status is no move: nothing blocks the rest
        findings = tuple(f for f in plan.findings if f.code != ILLEGAL_MOVE)
        blocked = blocked and any(f.severity == "error" for f in findings)
    return replace(plan, action=action, payload=work.payload, changes=changes, status_path=work.status_path,
                   blocked=blocked,
                   findings=(*findings, *work.findings), history_line=fingerprint,
                   kept=tuple(work.kept), conflicts=tuple(work.conflicts), confirmed=tuple(sorted(work.confirmed)),
                   written_after=written_after, confirmed_values=tuple(sorted(work.confirmed_values.items())))
