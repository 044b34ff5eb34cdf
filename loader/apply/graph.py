"""The record-level dependency graph of a plan, and the scheduler that walks it during apply.

A record may be written as soon as every record it depends on exists: no barrier between
entity types. `RecordGraph` is the pure value a whole plan is checked with (no cycle, no repeated
ref, the dependencies it lacks); `Scheduler` is the per-run walk: records are added to it (a
whole plan at once, or a saved plan's records a batch at a time as they are read), it hands out
ready records and, when one fails or is skipped, withdraws everything that depends on it.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from loader.errors import PlanError
from loader.plan.model import RecordPlan


@dataclass(frozen=True)
class RecordGraph:
    """Refs in plan order, what each depends on, and who depends on each.

    `missing` names, per ref, dependencies that are not in the graph at all (a record the
    plan does not create here): such a record can never be written in this run.
    """

    refs: tuple[str, ...]
    depends_on: Mapping[str, frozenset[str]]
    dependants: Mapping[str, frozenset[str]]
    rank: Mapping[str, int]  # dispatch priority: by creation order, then plan order (`rank_of`)
    missing: Mapping[str, tuple[str, ...]]

    def dependants_of(self, refs: Iterable[str]) -> frozenset[str]:
        """Every ref that depends, directly or transitively, on any of `refs` (not `refs` itself)."""
        found: set[str] = set()
        stack = list(refs)
        while stack:
            for child in self.dependants.get(stack.pop(), ()):
                if child not in found:
                    found.add(child)
                    stack.append(child)
        return frozenset(found)


def build_graph(records: Iterable[RecordPlan], creation_order: Iterable[str] = ()) -> RecordGraph:
    """The graph over `records`; raises PlanError on a dependency cycle or a repeated ref."""
    records = tuple(records)
    entity_rank = {name: i for i, name in enumerate(creation_order)}
    refs: list[str] = []
    rank: dict[str, int] = {}
    for position, record in enumerate(records):
        if record.ref in rank:
            raise PlanError(f"the plan holds record {record.ref!r} twice", where=record.source)
        refs.append(record.ref)
        rank[record.ref] = rank_of(entity_rank.get(record.entity, len(entity_rank)), position)
    depends_on: dict[str, frozenset[str]] = {}
    missing: dict[str, tuple[str, ...]] = {}
    dependants: dict[str, set[str]] = {}
    for record in records:
        if not record.depends_on:  # most records: no generator, no set of their own
            depends_on[record.ref] = _NONE
            continue
        present = frozenset(d for d in record.depends_on if d in rank and d != record.ref)
        absent = tuple(d for d in record.depends_on if d not in rank)
        depends_on[record.ref] = present
        if absent:
            missing[record.ref] = absent
        for dep in present:
            dependants.setdefault(dep, set()).add(record.ref)
    graph = RecordGraph(
        refs=tuple(refs),
        depends_on=depends_on,
        dependants={ref: frozenset(dependants[ref]) if ref in dependants else _NONE for ref in refs},
        rank=rank,
        missing=missing,
    )
    _check_acyclic(graph)
    return graph


def rank_of(entity_rank: int, position: int) -> int:
    """A record's dispatch priority, lowest first: its entity's place in the creation order, then its
    place in the plan (one int, which a heap compares faster than the pair)."""
    return (entity_rank << _POSITION_BITS) | position


_POSITION_BITS = 40  # places in a plan: far more records than any plan holds
_NONE: frozenset[str] = frozenset()


def _check_acyclic(graph: RecordGraph) -> None:
    """PlanError when some records depend on each other in a cycle: those that a walk in dependency
    order never reaches (in any order: no ranks needed to find them)."""
    waiting = {ref: len(deps) for ref, deps in graph.depends_on.items()}
    reached = [ref for ref, count in waiting.items() if count == 0]
    for ref in reached:  # grows as it goes
        for child in graph.dependants[ref]:
            waiting[child] -= 1
            if waiting[child] == 0:
                reached.append(child)
    if len(reached) == len(graph.refs):
        return
    remaining = sorted((ref for ref, count in waiting.items() if count), key=graph.rank.__getitem__)
    raise PlanError(
        "the plan's records depend on each other in a cycle: " + ", ".join(remaining[:5]),
        hint="a record cannot reference a record that references it; fix the references in the source",
    )


Cause = tuple[str, bool]  # the ref whose end withdrew a record, and whether it failed (else skipped)


class Scheduler:
    """One walk of a plan's records during apply. Not thread-safe; used from one event loop.

    `add` gives it records; `next_ready()` gives a ref whose dependencies all succeeded (None when
    none is ready now), lowest rank first; report each dispatched ref back with `succeeded` or
    `failed`. `failed` and `withdraw` withdraw the dependants and return them, so the caller can
    record them as skipped; `cause` names, for each ref ended or withdrawn, the end that did it.
    """

    def __init__(self, creation_order: Iterable[str] = ()) -> None:
        self._entity_rank = {name: i for i, name in enumerate(creation_order)}
        self.refs: list[str] = []  # in the order they were added: plan order
        self.cause: dict[str, Cause] = {}
        self._when: dict[str, int] = {}  # ref in `cause` -> when it got there (the first end withdraws)
        self._rank: dict[str, int] = {}
        self._dependants: dict[str, list[str]] = {}
        self._waiting: dict[str, int] = {}  # ref -> dependencies that have not succeeded yet
        self._ready: list[tuple[int, str]] = []  # a heap by rank
        self._succeeded: set[str] = set()
        self._finished: set[str] = set()
        self._in_flight: set[str] = set()
        self._withdrawn: set[str] = set()

    def add(self, records: Sequence[RecordPlan], *, absent_ok: bool = False) -> dict[str, Cause]:
        """Walk `records` too (in any order among themselves); returns those withdrawn at once, each
        with the `cause` of the dependency that ended without success. A dependency that is neither
        among them nor added before is a PlanError, or with `absent_ok` left to the caller (a whole
        plan's `RecordGraph.missing`)."""
        for record in records:
            ref = record.ref
            if ref in self._rank:
                raise PlanError(f"the plan holds record {ref!r} twice", where=record.source)
            self._rank[ref] = rank_of(self._entity_rank.get(record.entity, len(self._entity_rank)), len(self.refs))
            self.refs.append(ref)
            self._dependants[ref] = []
        withdrawn: dict[str, Cause] = {}
        for record in records:
            cause = self._wire(record, absent_ok)
            if cause is not None:
                withdrawn[record.ref] = cause
        return withdrawn

    def _wire(self, record: RecordPlan, absent_ok: bool) -> Cause | None:
        """`record` waiting for its dependencies, ready, or withdrawn (its cause) when one ended."""
        ref = record.ref
        waiting = 0
        ended: list[str] = []  # dependencies that ended without success, or were withdrawn
        for dep in dict.fromkeys(record.depends_on):
            if dep == ref:
                continue
            if dep not in self._rank:
                if absent_ok:
                    continue
                raise PlanError(f"record {ref!r} of the plan comes before {dep!r}, which it depends on",
                                where=record.source)
            if dep in self._withdrawn or (dep in self._finished and dep not in self._succeeded):
                ended.append(dep)
            self._dependants[dep].append(ref)
            waiting += dep not in self._succeeded
        self._waiting[ref] = waiting
        if ended:
            cause = self.cause[min(ended, key=self._when.__getitem__)]
            self._withdrawn.add(ref)
            self._caused(ref, cause)
            return cause
        if waiting == 0:
            heapq.heappush(self._ready, (self._rank[ref], ref))
        return None

    def next_ready(self) -> str | None:
        ready, withdrawn = self._ready, self._withdrawn
        while ready:
            ref = heapq.heappop(ready)[1]
            if ref not in withdrawn:
                self._in_flight.add(ref)
                return ref
        return None

    def ready_count(self) -> int:
        """How many refs may be ready now (at most: some may have been withdrawn since)."""
        return len(self._ready)

    def succeeded(self, ref: str) -> None:
        self._finish(ref)
        self._succeeded.add(ref)
        for child in self._dependants.get(ref, ()):
            self._waiting[child] -= 1
            if self._waiting[child] == 0 and child not in self._withdrawn:
                heapq.heappush(self._ready, (self._rank[child], child))

    def failed(self, ref: str) -> frozenset[str]:
        """Mark `ref` as not done; returns the dependants newly withdrawn because of it."""
        self._finish(ref)
        self._caused(ref, (ref, True))
        return self._withdraw((ref,), failed=True)

    def withdraw(self, refs: Iterable[str]) -> frozenset[str]:
        """Never dispatch `refs`' dependants (nor `refs` not yet dispatched); returns the newly withdrawn."""
        return self._withdraw(tuple(refs), failed=False)

    def pending(self) -> tuple[str, ...]:
        """Refs neither finished, in flight nor withdrawn, in plan order (e.g. left by an interruption)."""
        gone = self._finished | self._withdrawn | self._in_flight
        return tuple(ref for ref in self.refs if ref not in gone)

    def _withdraw(self, refs: tuple[str, ...], failed: bool) -> frozenset[str]:
        newly: set[str] = set()
        for root in refs:
            if root not in self._finished and root not in self._in_flight and root not in self._withdrawn:
                newly.add(root)
                self._caused(root, (root, failed))
            stack, seen = [root], {root}
            while stack:
                for child in self._dependants.get(stack.pop(), ()):
                    if child in seen:
                        continue
                    seen.add(child)
                    stack.append(child)
                    if child not in self._finished and child not in self._withdrawn:
                        newly.add(child)
                        self._caused(child, (root, failed))
        self._withdrawn |= newly
        return frozenset(newly)

    def _caused(self, ref: str, cause: Cause) -> None:
        if ref not in self.cause:
            self.cause[ref] = cause
            self._when[ref] = len(self._when)

    def _finish(self, ref: str) -> None:
        self._in_flight.discard(ref)
        self._finished.add(ref)
