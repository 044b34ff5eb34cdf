"""References as a reviewer reads them: by the target's key (`parent: program SCI01`), not its id.

A reference field holds an id (`"3f2…"`, `{"id": "3f2…"}`, a list of them) or, for a record this plan
creates, a `PendingId`. `ReferenceNames` knows, from the plan alone, the key of every record the
plan names: those it plans (by live id and by ref), those live and not managed here, and those the
history knows it loaded (dropped, released). `named_references` gives reports a plan whose change
values show references as `Target`s; `view.value_text` writes a Target as `program SCI01`, or as
`id 3f2…` where no key is known. Payloads and digests keep the ids (it is a view, as masking is).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from loader.plan.model import BlockPlan, FieldChange, FieldOutcome, PendingId, Plan, RecordPlan


@dataclass(frozen=True, slots=True)
class Target:
    """The record a reference points at: its entity and key as text, or only its id where no key is known."""

    id: str
    entity: str | None = None
    key: str | None = None

    def __str__(self) -> str:
        return f"{self.entity} {self.key}" if self.key is not None else f"id {self.id}"


def _key_text(key: tuple[Any, ...]) -> str:
    return "/".join(str(k) if not isinstance(k, list) else "/".join(map(str, k)) for k in key)


class ReferenceNames:
    """The key of each record `plan` names, by live id and by plan ref."""

    def __init__(self, plan: Plan) -> None:
        self._by_id: dict[str, Target] = {}
        self._by_ref: dict[str, Target] = {}
        for block in plan.blocks:
            self._add_block(block)

    def _add_block(self, block: BlockPlan) -> None:
        entity = block.entity
        for others in (block.not_in_source_records, block.dropped, block.released):
            for other in others:
                self._by_id.setdefault(other.id, Target(other.id, entity, _key_text(other.key)))
        for record in block.records:
            target = Target(record.live_id or record.ref, record.entity, _key_text(record.key))
            self._by_ref.setdefault(record.ref, target)
            if record.live_id:
                self._by_id[record.live_id] = target  # a planned record's key wins: a renumber's is its new one

    def shown(self, value: Any) -> Any:
        """`value` with a reference (or a list of them) as a Target; any other value as it is."""
        if isinstance(value, list) and value:
            targets = [self._target(v) for v in value]
            return value if any(t is None for t in targets) else targets
        target = self._target(value)
        return value if target is None else target

    def _target(self, value: Any) -> Target | None:
        if type(value) is str:
            return self._by_id.get(value)
        if isinstance(value, PendingId):
            return self._by_ref.get(value.ref, Target(value.ref))
        if isinstance(value, dict) and len(value) == 1 and "id" in value:  # a reference of the object shape
            inner = value["id"]
            if isinstance(inner, PendingId):
                return self._by_ref.get(inner.ref, Target(inner.ref))
            return self._by_id.get(inner, Target(inner)) if isinstance(inner, str) else None
        return None

    def change(self, change: FieldChange) -> FieldChange:
        old, new = self.shown(change.old), self.shown(change.new)
        return change if old is change.old and new is change.new else replace(change, old=old, new=new)

    def outcome(self, outcome: FieldOutcome) -> FieldOutcome:
        sheet, live, last = self.shown(outcome.sheet), self.shown(outcome.live), self.shown(outcome.last_loaded)
        if sheet is outcome.sheet and live is outcome.live and last is outcome.last_loaded:
            return outcome
        return replace(outcome, sheet=sheet, live=live, last_loaded=last)

    def record(self, record: RecordPlan) -> RecordPlan:
        changes = tuple(map(self.change, record.changes))
        kept = tuple(map(self.outcome, record.kept))
        conflicts = tuple(map(self.outcome, record.conflicts))
        if all(a is b for a, b in zip((*changes, *kept, *conflicts),
                                      (*record.changes, *record.kept, *record.conflicts), strict=True)):
            return record
        return replace(record, changes=changes, kept=kept, conflicts=conflicts)


def named_references(plan: Plan) -> Plan:
    """`plan` as reports show it: every reference value in its changes, kept edits and conflicts a Target."""
    names = ReferenceNames(plan)
    blocks = []
    for block in plan.blocks:
        records = tuple(map(names.record, block.records))
        same = all(a is b for a, b in zip(records, block.records, strict=True))
        blocks.append(block if same else replace(block, records=records))
    return replace(plan, blocks=tuple(blocks))


def target_text(value: Any) -> str | None:
    """A Target, or a list of them, as text (`program SCI01`, `[tag A, tag B]`); None for any other value."""
    if type(value) is Target:
        return str(value)
    if isinstance(value, list) and value and all(type(v) is Target for v in value):
        return "[" + ", ".join(map(str, value)) + "]"
    return None
