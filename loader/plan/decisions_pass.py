"""Reviewers' decisions brought into a plan (section 10's decisions): pure, after the diff and the
three-way pass, before the digest.

A change a decision holds (`loader.history.decisions.match_decisions`: a skip while the sheet
proposes the refused value, a defer before its date) is taken out of the record's payload and
changes and shown as a warning "skipped by decision (reason, who, date)"; an update whose every
change is held becomes unchanged. A skipped create is held as a whole (planned as unchanged, nothing
sent, with that warning: not an error) and so is every record that depends on it, transitively
("skipped (depends on …)"). A skipped status step holds it and the steps after it. A conflict
decided for the platform (recorded as a skip of the sheet's value) is no longer shown as a conflict
but as skipped by decision; one decided for the sheet is settled earlier, by the three-way pass
asking `SheetWins`, and written like an update. A decision naming a record or field this plan no
longer has is one warning each. The decisions matched (`Decision.digest_part`: not their reasons)
are recorded in the plan's `decisions`, so the digest covers them; a plan no
decision touches is returned as it is.

Changes are named as the review workbook names them (`loader.plan.change_identity`).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Any

from loader.findings import Finding
from loader.history.decisions import CREATE, Decision, Decisions, Kind, ProposedChange, match_decisions
from loader.history.digests import Digester, RecordDigests
from loader.plan.change_identity import create_value, record_identity
from loader.plan.model import Action, BlockPlan, FieldChange, Plan, RecordPlan
from loader.record_fields import CUSTOM

DECIDED = "skipped-by-decision"  # the finding's code (the digest leaves its message out: it holds the reason)
WRITTEN = "written-by-decision"  # a conflict decided for the sheet (the same: its message holds the reason)
STALE = "stale-decision"
STATUS = "status"

Formers = Callable[[str, str], tuple[str, ...]]  # (entity, key token) -> the key tokens the record had before


def no_formers(entity: str, token: str) -> tuple[str, ...]:
    """No record had another key before (a plan without a history)."""
    return ()


def match_moved(decisions: Decisions, change: ProposedChange, value: Any, digester: Digester, formers: Formers,
                today: date) -> Decision | None:
    """The decision holding `change` (of the value `value`) under the record's key or, when none does,
    under a key the record had before (renumbered, or renumbered back by a revert), so a decision
    follows the record; one so matched says so in its reason ("decided for U002, now U1002"). An
    entity with personal fields has key digests that cannot be digested again: its own key only."""
    decision = match_decisions(decisions, change, today)
    if decision is not None or digester.is_personal(change.entity):
        return decision
    for former in formers(change.entity, change.key):
        key = tuple(json.loads(former))  # the token of a key without personal fields is its text
        digest = digester.record(change.entity, key).value(change.field, value)
        moved = ProposedChange(change.environment, change.entity, former, change.field, digest)
        decision = match_decisions(decisions, moved, today)
        if decision is not None:
            reason = decision.reason or "no reason given"
            now = ", ".join(str(part) for part in json.loads(change.key))
            return replace(decision, reason=f"{reason}; decided for {', '.join(map(str, key))}, now {now}")
    return None


class SheetWins:
    """The conflicts reviewers decided for the sheet, asked by the three-way pass
    (`loader.plan.history_fields`) for each conflict it finds: a decision that still holds (the sheet
    proposes the value decided on) has the sheet's value written over the platform edit. The decisions
    matched are kept in `matched`, for `with_decisions` to put in the digest with the others."""

    def __init__(self, decisions: Decisions, digester: Digester, env: str, today: date) -> None:
        self.decisions, self.digester, self.env, self.today = decisions, digester, env, today
        self.matched: dict[tuple[str, str, str, str], Decision] = {}

    def __call__(self, record: RecordPlan, field: str, sheet_digest: str) -> Decision | None:
        """The `sheet` decision about `field` of `record` proposing the value of `sheet_digest`, or None."""
        token = self.digester.key_token(record.entity, record.key)
        decision = match_decisions(self.decisions, ProposedChange(self.env, record.entity, token, field, sheet_digest),
                                   self.today)
        if decision is None or decision.decision is not Kind.SHEET:
            return None
        self.matched[decision.identity] = decision
        return decision


def sheet_won_message(decision: Decision, field: str) -> str:
    """"field: the sheet's value written over the platform edit by decision (reason, who, date)"."""
    reason = decision.reason or "no reason given"
    return (f"{field}: the sheet's value written over the platform edit by decision "
            f"({reason}, {decision.by or 'unknown'}, {decision.decided_on})")


def with_decisions(plan: Plan, decisions: Decisions, digester: Digester, today: date,
                   sheet_won: Mapping[tuple[str, str, str, str], Decision] | None = None,
                   formers: Formers = no_formers) -> Plan:
    """`plan` with the changes `decisions` hold taken out (see the module docstring); `sheet_won`:
    the conflicts decided for the sheet that the three-way pass wrote (`SheetWins.matched`); `formers`:
    the keys a record had before, under which a decision still holds (`match_moved`)."""
    ours = [d for d in decisions.entries if d.environment == plan.env_name]
    mine = [d for d in ours if d.decision is not Kind.SHEET]
    matched: dict[tuple[str, str, str, str], Decision] = dict(sheet_won or {})
    if not ours:
        return plan
    skipped: list[str] = []  # refs of the creates skipped
    entities = {d.entity for d in mine}
    blocks = [_block(block, decisions, (digester, formers), today, plan.env_name, matched, skipped)
              if block.entity in entities else block for block in plan.blocks]
    blocks = hold_dependents(blocks, skipped, "skipped by decision")
    stale = _stale(ours, plan, digester, formers)
    if not matched and not stale:
        return plan
    found = tuple(sorted(d.digest_part for d in matched.values())) if matched else plan.decisions
    return replace(plan, blocks=tuple(blocks), findings=(*plan.findings, *stale), decisions=found)


def skipped_message(decision: Decision, what: str) -> str:
    """"name: skipped by decision (reason, who, date)"; a defer says until when."""
    until = f" until {decision.until.isoformat()}" if decision.decision is Kind.DEFER and decision.until else ""
    reason = decision.reason or "no reason given"
    return f"{what}: skipped by decision{until} ({reason}, {decision.by or 'unknown'}, {decision.decided_on})"


# ---- one block, one record -------------------------------------------------------------------


def _block(block: BlockPlan, decisions: Decisions, naming: tuple[Digester, Formers], today: date, env: str,
           matched: dict[tuple[str, str, str, str], Decision], skipped: list[str]) -> BlockPlan:
    records = []
    changed = False
    for record in block.records:
        held = _record(record, decisions, naming, today, env, matched)
        if held is not record and record.action is Action.CREATE and held.action is Action.UNCHANGED:
            skipped.append(record.ref)
        changed |= held is not record
        records.append(held)
    return BlockPlan(**{**_fields(block), "records": tuple(records)}) if changed else block


def _fields(block: BlockPlan) -> dict[str, Any]:
    return {name: getattr(block, name) for name in BlockPlan.__dataclass_fields__}


def _record(record: RecordPlan, decisions: Decisions, naming: tuple[Digester, Formers], today: date, env: str,
            matched: dict[tuple[str, str, str, str], Decision]) -> RecordPlan:
    if record.blocked or record.errors or not (record.has_changes or record.conflicts):
        return record
    digester, formers = naming
    token, digests = record_identity(digester, record)
    if digests is None:
        return record

    def held(field: str, value: Any) -> Decision | None:
        change = ProposedChange(env, record.entity, token, field, digests.value(field, value))
        decision = match_moved(decisions, change, value, digester, formers, today)
        if decision is None or decision.decision is Kind.SHEET:
            return None  # a conflict decided for the sheet is the three-way pass's (`SheetWins`)
        matched[decision.identity] = decision
        return decision

    if record.action is Action.CREATE:
        decision = held(CREATE, create_value(record))
        if decision is not None:
            return _held(record, skipped_message(decision, "new record"))
    return _fields_held(_conflicts_held(record, held), held, digests)


def _conflicts_held(record: RecordPlan, held: Any) -> RecordPlan:
    """The record with each conflict decided for the platform (a skip of the sheet's value) shown as
    skipped by decision, no longer as a conflict; the platform's value stays, as with any conflict."""
    notes: list[Finding] = []
    left = []
    for conflict in record.conflicts:
        decision = None if conflict.pii else held(conflict.field, conflict.sheet)
        if decision is None:
            left.append(conflict)
            continue
        what = f"{conflict.field} (a conflict: the platform's value kept)"
        notes.append(Finding("warning", DECIDED, skipped_message(decision, what), record.source))
    if not notes:
        return record
    return replace(record, conflicts=tuple(left), findings=(*record.findings, *notes))


def _fields_held(record: RecordPlan, held: Any, digests: RecordDigests) -> RecordPlan:
    """The record with its held field changes and status steps taken out."""
    path = record.status_path
    notes: list[Finding] = []
    for number, step in enumerate(path):
        decision = held(STATUS, step)
        if decision is not None:
            shown = " → ".join(path[number:])
            notes.append(Finding("warning", DECIDED, skipped_message(decision, f"status {shown}"), record.source))
            path = path[:number]
            break
    dropped: set[str] = set()
    if record.action is Action.UPDATE:
        for change in record.changes:
            if change.field == STATUS and record.status_path:
                continue
            decision = held(change.field, change.new)
            if decision is not None:
                dropped.add(change.field)
                notes.append(Finding("warning", DECIDED, skipped_message(decision, change.field), record.source))
    if not notes:
        return record
    if record.renamed_from is not None and any(
            c.field in dropped and c.new in record.key and c.old in record.renamed_from for c in record.changes):
        # the renumber is held: the record keeps its old key and line, and its other changes wait for it
        return replace(record, action=Action.UNCHANGED, payload={}, changes=(), status_path=(), renamed_from=None,
                       findings=(*record.findings, *notes), confirmed=(), written_after=(), confirmed_values=())
    changes = _changes(record.changes, dropped, path, bool(record.status_path))
    payload = _payload(record.payload, record.changes, dropped)
    action = record.action
    if action is Action.UPDATE and not payload and not path:
        action = Action.UNCHANGED
    return replace(
        record, action=action, payload=payload, changes=changes, status_path=path,
        findings=(*record.findings, *notes),
        written_after=tuple((name, w) for name, w in record.written_after if name not in dropped))


def _changes(changes: tuple[FieldChange, ...], dropped: set[str], path: tuple[str, ...],
             had_path: bool) -> tuple[FieldChange, ...]:
    kept = []
    for change in changes:
        if change.field in dropped:
            continue
        if change.field == STATUS and had_path:
            if not path:
                continue
            change = FieldChange(change.field, change.old, path[-1], change.pii)
        kept.append(change)
    return tuple(kept)


def _payload(payload: Mapping[str, Any], changes: Sequence[FieldChange], dropped: set[str]) -> dict[str, Any]:
    """The payload without the held fields; a held label goes back to its live value (and the labels
    leave the payload when no label change is left)."""
    out = dict(payload)
    for change in changes:
        if change.field not in dropped:
            continue
        name, _, label = change.field.partition(".")
        if name == CUSTOM and label and isinstance(out.get(CUSTOM), Mapping):
            labels = dict(out[CUSTOM])
            if change.old is None:
                labels.pop(label, None)
            else:
                labels[label] = change.old
            out[CUSTOM] = labels
        else:
            out.pop(change.field, None)
    label_changes = [c for c in changes if c.field.startswith(f"{CUSTOM}.") and c.field not in dropped]
    if CUSTOM in out and any(d.startswith(f"{CUSTOM}.") for d in dropped) and not label_changes:
        del out[CUSTOM]
    return out


# ---- dependents of a skipped create ----------------------------------------------------------


def _held(record: RecordPlan, message: str) -> RecordPlan:
    """The record held as a whole: nothing sent (planned as unchanged), with the warning `message`."""
    note = Finding("warning", DECIDED, message, record.source)
    confirmed = set(record.confirmed)
    return replace(record, action=Action.UNCHANGED, payload={}, changes=(), status_path=(),
                            findings=(*record.findings, note),
                            written_after=tuple((n, w) for n, w in record.written_after if n in confirmed))


def hold_dependents(blocks: list[BlockPlan], skipped: Sequence[str], why: str) -> list[BlockPlan]:
    """Every record depending (transitively) on a create `skipped` held as "skipped (depends on …, `why`)"."""
    if not skipped:
        return blocks
    records = {r.ref: r for b in blocks for r in b.records}
    dependants: dict[str, list[str]] = {}
    for ref, record in records.items():
        for dep in record.depends_on:
            dependants.setdefault(dep, []).append(ref)
    held: dict[str, str] = {}
    queue = deque(skipped)
    while queue:
        ref = queue.popleft()
        for dependant in dependants.get(ref, ()):
            record = records[dependant]
            if dependant in held or dependant in skipped or record.blocked or record.errors:
                continue
            held[dependant] = ref
            queue.append(dependant)
    if not held:
        return blocks
    out = []
    for block in blocks:
        if not any(r.ref in held for r in block.records):
            out.append(block)
            continue
        records_out = tuple(_held(r, f"skipped (depends on {held[r.ref]}, {why})")
                            if r.ref in held else r for r in block.records)
        out.append(BlockPlan(**{**_fields(block), "records": records_out}))
    return out


# ---- decisions about what is no longer there -------------------------------------------------


def _named(block: BlockPlan, digester: Digester, formers: Formers) -> set[str]:
    """The key tokens a decision may name a record of `block` by: its key, a key it had before, the key
    the plan renumbers it from, and the key of each blocked row."""
    named = {digester.key_token(block.entity, r.key) for r in block.records}
    named.update(former for token in list(named) for former in formers(block.entity, token))
    named.update(digester.key_token(block.entity, r.renamed_from) for r in block.records if r.renamed_from)
    named.update(digester.key_token(block.entity, b.key) for b in block.blocked_rows if b.key is not None)
    return named


def _stale(decisions: Sequence[Decision], plan: Plan, digester: Digester, formers: Formers) -> list[Finding]:
    """One warning per decision about an entity this plan loads whose record (or field) it no longer has."""
    tokens: dict[str, set[str]] = {}
    fields: dict[str, set[str]] = {}
    wanted = {d.entity for d in decisions}
    for block in plan.blocks:
        if block.entity not in wanted or (digester.is_personal(block.entity) and digester.data_key is None):
            continue  # no decision about it, or its records cannot be named: nothing to tell
        tokens.setdefault(block.entity, set()).update(_named(block, digester, formers))
        managed = fields.setdefault(block.entity, set())
        managed.update(rule.field for rule in block.field_rules)
        managed.update(c.field for r in block.records for c in r.changes)
    found = []
    for decision in decisions:
        if decision.entity not in tokens:
            continue
        if decision.key not in tokens[decision.entity]:
            what = "no record with that key any more"
        elif decision.field not in (CREATE, STATUS) and fields[decision.entity] \
                and decision.field not in fields[decision.entity]:
            what = "the mappings no longer set that field"
        else:
            continue
        found.append(Finding("warning", STALE, f"decisions.yaml: the {decision.decision.value} of {decision.entity} "
                             f"{decision.key} {decision.field} names what this plan no longer has ({what}); "
                             "delete the entry", None))
    return found
