"""What apply did, per record: the results model that the terminal summary, results.xlsx and
results.json render.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from loader.places import CellRef


class Outcome(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    SKIPPED = "skipped"
    FAILED = "failed"


OUTCOMES: tuple[Outcome, ...] = tuple(Outcome)

ANSWER_LOST_ADOPTED = "sent, answer lost, adopted"
"""The message of a create whose answer was lost and whose record was then found under its key."""


@dataclass(frozen=True)
class RecordResult:
    """The outcome of one record of the plan.

    `fields` names the fields sent (created or updated); `status` is the HTTP status of a failure;
    `message` says why a record was skipped, or carries the service's message for a failure, or
    for a create whose answer was lost and whose record was found and adopted, ANSWER_LOST_ADOPTED;
    `attempts` counts the create/update requests sent for it (lookups not included);
    `adopted` is true when a create's answer was lost and the record was found under its key.
    `cells` names the source cells to highlight when a failure is tied to fields.
    `blocked` is true for a record skipped because of errors (its own or a dependency's, `--partial`);
    `message` then names the error that blocked it.
    """

    ref: str
    block: str
    entity: str
    key: tuple[Any, ...]
    outcome: Outcome
    source: str
    row: int | None = None
    id: str | None = None
    fields: tuple[str, ...] = ()
    status: int | None = None
    message: str | None = None
    attempts: int = 0
    adopted: bool = False
    record_status: str | None = None  # e.g. the arrangement status reached
    cells: tuple[CellRef, ...] = ()
    blocked: bool = False


@dataclass(frozen=True)
class BlockSummary:
    name: str
    entity: str
    counts: Mapping[Outcome, int]
    blocked: int = 0  # of the skipped records, those blocked by errors

    def count(self, outcome: Outcome) -> int:
        return self.counts.get(outcome, 0)


@dataclass(frozen=True)
class Results:
    """Every record's outcome, in plan order, plus where the apply ran and whether it was cut short."""

    environment: str
    env_name: str
    records: tuple[RecordResult, ...]
    interrupted: bool = False
    refused: str | None = None  # why nothing was applied, when apply refused before any write
    started_at: str | None = None
    finished_at: str | None = None
    request_counts: Mapping[str, int] = field(default_factory=dict)
    block_sources: Mapping[str, tuple[str, str | None]] = field(default_factory=dict)  # block -> (file, sheet)
    apply_id: str | None = None  # the journal's id in the history (`loader revert --apply ID`), when one was kept
    elapsed_s: float | None = None  # seconds from the first write to the last answer

    def counts(self) -> Counter[Outcome]:
        return Counter(r.outcome for r in self.records)

    def blocks(self) -> tuple[BlockSummary, ...]:
        order: dict[str, str] = {}
        tallies: dict[str, Counter[Outcome]] = {}
        blocked: Counter[str] = Counter()
        for name in self.block_sources:
            order.setdefault(name, "")
            tallies.setdefault(name, Counter())
        for r in self.records:
            order[r.block] = r.entity
            tallies.setdefault(r.block, Counter())[r.outcome] += 1
            blocked[r.block] += r.blocked
        return tuple(BlockSummary(name, order[name], dict(tallies[name]), blocked[name]) for name in order)

    def blocked(self) -> tuple[RecordResult, ...]:
        """Records not applied because of errors, each with the error that blocked it in `message`."""
        return tuple(r for r in self.records if r.blocked)

    @property
    def ok(self) -> bool:
        """True when everything the plan asked for was done."""
        if self.interrupted or self.refused:
            return False
        return not any(r.outcome in (Outcome.FAILED, Outcome.SKIPPED) for r in self.records)

    def by_ref(self) -> dict[str, RecordResult]:
        return {r.ref: r for r in self.records}


def results_in_plan_order(results: Iterable[RecordResult], refs: Iterable[str]) -> tuple[RecordResult, ...]:
    """`results` sorted as `refs` (the plan's order); results for unknown refs go last."""
    position = {ref: i for i, ref in enumerate(refs)}
    return tuple(sorted(results, key=lambda r: position.get(r.ref, len(position))))
