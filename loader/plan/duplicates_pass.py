"""Probable duplicate people brought into a plan (contract section 11): pure, after the reviewers'
decisions, before the digest.

For each block with `duplicates:`, its creates are matched (`loader.plan.duplicates`) against the
live records of its entity and against the block's earlier creates. A create that resembles one is
**held**: planned as unchanged, nothing sent, with the warning `HELD` naming the live key (or the
earlier row) it resembles, the fields that agreed and the name score, never a value; what depends
on it (its credentials) is held with it. `Plan.held_duplicates` counts them (`--detailed-exitcode`).

A reviewer's decision about the row (`decisions.yaml`, field CREATE, the row's key token) lifts the
hold: `create` (a new person: created as planned, while the row proposes the values decided on) or
`same` (`refused` holds the live record's key token): the row is that live record. It is then
planned as unchanged on the live id with W set to the row's values (`RecordPlan.confirmed` and
`written_after`), so the apply records the row's key on the live record's history line, and later
plans match the row to it by its line: differences become kept platform edits, never overwrites,
and key fields are never written. Records that depend on the row get the live id in place of the
pending one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from loader.findings import Finding
from loader.history.decisions import CREATE, Decision, Decisions, Kind
from loader.history.digests import Digester, RecordDigests
from loader.live_records import updated_time
from loader.plan.change_identity import create_value, record_identity
from loader.plan.decisions_pass import hold_dependents, skipped_message
from loader.plan.duplicates import LivePeople, Resemblance, find_duplicates, name_fields, person_of
from loader.plan.model import HELD, Action, BlockPlan, DuplicateHold, PendingId, Plan, RecordPlan
from loader.plan.resolve import key_text
from loader.profile import Profile
from loader.record_fields import CUSTOM
from loader.source.mapping import DuplicateRule

SAME = "same-by-decision"  # the finding's code of a row decided `same`


def with_duplicates(plan: Plan, rules: Mapping[str, DuplicateRule], live: Mapping[str, LivePeople],
                    profile: Profile, digester: Digester, decisions: Decisions | None) -> Plan:
    """`plan` with the creates of the blocks `rules` names (block -> rule) that resemble a person of
    `live` (block -> its entity's live people) or an earlier row held, or settled by a decision (see
    the module docstring)."""
    if not any(b.name in rules for b in plan.blocks):
        return plan
    held: list[str] = []
    same: dict[str, str] = {}  # ref of a row decided `same` -> the live id it is
    matched: list[Decision] = []
    blocks = []
    for block in plan.blocks:
        rule = rules.get(block.name)
        if rule is None:
            blocks.append(block)
            continue
        people = _People(block, rule, live.get(block.name, LivePeople((), ())), profile, digester, plan.env_name,
                         decisions)
        blocks.append(replace(block, records=people.planned(held, same, matched)))
    if same:
        blocks = [replace(b, records=tuple(_through(r, same) for r in b.records)) for b in blocks]
    blocks = hold_dependents(blocks, held, "held as a probable duplicate")
    found = sorted({*plan.decisions, *(d.digest_part for d in matched)})
    return replace(plan, blocks=tuple(blocks), decisions=tuple(found))


class _People:
    """One block's creates matched against its entity's live records (and its earlier creates)."""

    def __init__(self, block: BlockPlan, rule: DuplicateRule, live: LivePeople, profile: Profile,
                 digester: Digester, env: str, decisions: Decisions | None) -> None:
        self.block, self.live, self.digester, self.env, self.decisions = block, live.records, digester, env, decisions
        self.set_fields = profile.entity(block.entity).set_fields
        self.match = rule.match
        names = name_fields(rule.match)
        self.creates = [r for r in block.records if r.action is Action.CREATE and not r.blocked and not r.errors]
        found = find_duplicates([person_of(r.payload, names) for r in self.creates], live.people, rule.threshold)
        self.found = {r.ref: f for r, f in zip(self.creates, found, strict=True) if f is not None}

    def planned(self, held: list[str], same: dict[str, str], matched: list[Decision]) -> tuple[RecordPlan, ...]:
        out = []
        for record in self.block.records:
            found = self.found.get(record.ref)
            if found is None:
                out.append(record)
                continue
            token, digests = record_identity(self.digester, record)
            decision = self.decisions.get((self.env, record.entity, token, CREATE)) \
                if self.decisions and digests is not None else None
            live = None if found.earlier else self.live[found.other]
            if decision is not None and digests is not None and self._holds(decision, record, digests, live):
                matched.append(decision)
                if decision.decision is Kind.SAME and live is not None:
                    same[record.ref] = str(live["id"])
                    record = self._same(record, live, decision)
                out.append(record)
                continue
            held.append(record.ref)
            out.append(_held(record, self._hold(record, found, digests, live)))
        return tuple(out)

    def _hold(self, record: RecordPlan, found: Resemblance, digests: RecordDigests | None,
              live: Mapping[str, Any] | None) -> DuplicateHold:
        other = live if live is not None else self.creates[found.other].payload
        if live is not None:
            resembles = f"live {self.block.entity} {self._key_of(live)}"
        else:
            earlier = self.creates[found.other]
            resembles = f"an earlier row ({earlier.source}, key {'/'.join(str(k) for k in earlier.key)})"
        fields = (*self.block.key_fields, *(f for f in self.match if f not in self.block.key_fields))
        return DuplicateHold(
            resembles, found.agreed, found.score,
            tuple((name, record.payload.get(name), other.get(name)) for name in fields),
            "" if digests is None else digests.value(CREATE, create_value(record)),
            "" if digests is None or live is None else self._live_token(live))

    def _live_token(self, live: Mapping[str, Any]) -> str:
        return self.digester.key_token(self.block.entity, tuple(key_text(live.get(k)) for k in self.block.key_fields))

    def _holds(self, decision: Decision, record: RecordPlan, digests: RecordDigests,
               live: Mapping[str, Any] | None) -> bool:
        """Whether `decision` still settles the row: `create` while the row proposes the values decided
        on, `same` while the row resembles the live record decided on."""
        if decision.decision is Kind.NEW:
            return decision.refused == digests.value(CREATE, create_value(record))
        return decision.decision is Kind.SAME and live is not None and decision.refused == self._live_token(live)

    def _same(self, record: RecordPlan, live: Mapping[str, Any], decision: Decision) -> RecordPlan:
        """The row as the live record it was decided to be: nothing written, W set to the row's values."""
        digests = self.digester.record(record.entity, record.key)
        written: list[tuple[str, Any]] = []
        for name, value in record.payload.items():
            if name == CUSTOM and isinstance(value, Mapping):
                written += [(f"{CUSTOM}.{label}", digests.value(f"{CUSTOM}.{label}", v)) for label, v in value.items()]
            elif not isinstance(value, PendingId):
                as_set = name in self.set_fields
                w = digests.written(name, value, as_set=as_set)
                written.append((name, tuple(sorted(w)) if as_set else w))
        message = skipped_message(decision, f"the same person as live {record.entity} {self._key_of(live)}")
        note = Finding("warning", SAME, message.replace("skipped by decision", "recorded by decision", 1),
                       record.source)
        return replace(record, action=Action.UNCHANGED, live_id=str(live["id"]), live_updated_time=updated_time(live),
                       payload={}, changes=(), status_path=(), depends_on=(), findings=(*record.findings, note),
                       confirmed=tuple(name for name, _ in written), written_after=tuple(written))

    def _key_of(self, live: Mapping[str, Any]) -> str:
        return "/".join(str(live.get(k)) for k in self.block.key_fields)


def held_message(hold: DuplicateHold) -> str:
    """What reports say of a held row: whom it resembles, the fields that agreed, the score; never a value."""
    return (f"held: a probable duplicate of {hold.resembles}: {', '.join(hold.agreed)} agreed, names scored "
            f"{hold.score:.2f}; decide `create` or `same` in the review workbook (`loader plan --review`)")


def _held(record: RecordPlan, hold: DuplicateHold) -> RecordPlan:
    note = Finding("warning", HELD, held_message(hold), record.source)
    return replace(record, action=Action.UNCHANGED, payload={}, changes=(), status_path=(), confirmed=(),
                   written_after=(), findings=(*record.findings, note), duplicate=hold)


def _through(record: RecordPlan, same: Mapping[str, str]) -> RecordPlan:
    """`record` with the pending id of each row decided `same` replaced by the live id it is."""
    if not any(dep in same for dep in record.depends_on):
        return record
    payload = {name: _substituted(value, same) for name, value in record.payload.items()}
    return replace(record, payload=payload, depends_on=tuple(d for d in record.depends_on if d not in same))


def _substituted(value: Any, same: Mapping[str, str]) -> Any:
    if isinstance(value, PendingId):
        return same.get(value.ref, value)
    if isinstance(value, dict):
        return {k: _substituted(v, same) for k, v in value.items()}
    if isinstance(value, list):
        return [_substituted(v, same) for v in value]
    return value
