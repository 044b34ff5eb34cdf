"""What a plan holds back rather than writes: conflicts, probable duplicates, kept platform edits,
changes held by decision.

A plan whose every difference is held writes nothing, yet it is not "the service matches the
source": a conflict waits for a person, a kept edit and a decision hold the sheet's value back.
Each kind is one `HeldKind` row (a count and its words), so a new kind of held row is one more
row here, and every report says it the same way. A kind that `waits` for a
person keeps `plan --detailed-exitcode` at 2 (changes present) until someone decides
(contract section 2).
"""

from __future__ import annotations

from dataclasses import dataclass

from loader.plan.decisions_pass import DECIDED
from loader.plan.model import Plan
from loader.words import plural


@dataclass(frozen=True)
class HeldKind:
    """One kind of held row: how many, its noun (singular, plural), and whether it waits for a person."""

    count: int
    noun: str
    many: str
    waits: bool

    @property
    def words(self) -> str:
        """`1 conflict held`, `4 changes held by decision`."""
        return plural(self.count, self.noun, self.many)


def held_kinds(plan: Plan) -> list[HeldKind]:
    """The kinds of held rows the plan has (none with a count of zero), those that wait first."""
    records = plan.records()
    conflicts = sum(len(r.conflicts) for r in records)
    kept = sum(len(r.kept) for r in records)
    decided = sum(f.code == DECIDED for r in records for f in r.findings)
    kinds = [
        HeldKind(conflicts, "conflict held", "conflicts held", waits=True),
        HeldKind(plan.held_duplicates, "probable duplicate held", "probable duplicates held", waits=True),
        HeldKind(decided, "change held by decision", "changes held by decision", waits=False),
        HeldKind(kept, "platform edit kept", "platform edits kept", waits=False),
    ]
    return [k for k in kinds if k.count]


def waits_for_a_person(plan: Plan) -> bool:
    """True while the plan holds a row someone must decide (a conflict, a probable duplicate):
    changes present for CI."""
    return any(k.waits for k in held_kinds(plan))


def held_words(plan: Plan) -> str:
    """`1 conflict held, 4 changes held by decision`; "" when nothing is held."""
    return ", ".join(k.words for k in held_kinds(plan))
