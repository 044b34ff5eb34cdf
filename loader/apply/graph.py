"""The record-level dependency graph of a plan, and the scheduler that walks it during apply.

A record may be written as soon as every record it depends on exists: no barrier between
entity types. `RecordGraph` is the pure value (built once from the plan); `Scheduler` is the
per-run walk: it hands out ready records and, when one fails or is skipped, withdraws
everything that depends on it.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable, Mapping
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

    def order(self) -> tuple[str, ...]:
        """One dispatch order that respects every dependency (ties by creation order, then plan order)."""
        scheduler = Scheduler(self)
        out: list[str] = []
        while (ref := scheduler.next_ready()) is not None:
            out.append(ref)
            scheduler.succeeded(ref)
        return tuple(out)


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


class ReadyRecords:
    """What a walk of records keeps: those ready by rank, in flight, finished and withdrawn.

    The ready records are handed out lowest rank first. Most arrive in rank order (every record
    with no dependency at the start, sorted once, and then each record made ready after those):
    they wait in a queue taken from the front; the others wait on a heap, and the lower of the two
    fronts comes first. (A heap of them all cost a pop of ~log2(n) comparisons per write, ~2 µs at
    6,000 records, `loader.apply.pool`'s share of a write; the order is the same.)
    """

    def __init__(self, ready: list[tuple[int, str]]) -> None:
        ready.sort()
        self._in_order: deque[tuple[int, str]] = deque(ready)
        self._ready: list[tuple[int, str]] = []  # a heap: the records made ready out of rank order
        self._withdrawn: set[str] = set()
        self._finished: set[str] = set()
        self._in_flight: set[str] = set()

    def next_ready(self) -> str | None:
        in_order, ready, withdrawn = self._in_order, self._ready, self._withdrawn
        while in_order or ready:
            if ready and (not in_order or ready[0][0] < in_order[0][0]):
                ref = heapq.heappop(ready)[1]
            else:
                ref = in_order.popleft()[1]
            if ref not in withdrawn:
                self._in_flight.add(ref)
                return ref
        return None

    def ready_count(self) -> int:
        """How many refs may be ready now (at most: some may have been withdrawn since)."""
        return len(self._in_order) + len(self._ready)

    def _push(self, rank: int, ref: str) -> None:
        """`ref` (of `rank`) is ready: queued when it comes after every queued record, else on the heap."""
        in_order = self._in_order
        if not in_order or in_order[-1][0] < rank:
            in_order.append((rank, ref))
        else:
            heapq.heappush(self._ready, (rank, ref))

    def _finish(self, ref: str) -> None:
        self._in_flight.discard(ref)
        self._finished.add(ref)


class Scheduler(ReadyRecords):
    """One walk of a RecordGraph. Not thread-safe; used from one event loop.

    `next_ready()` gives a ref whose dependencies all succeeded (None when none is ready now);
    report each dispatched ref back with `succeeded` or `failed`. `failed` withdraws the
    dependants and returns them, so the caller can record them as skipped.
    """

    def __init__(self, graph: RecordGraph) -> None:
        self._graph = graph
        self._waiting = {ref: len(deps) for ref, deps in graph.depends_on.items()}
        super().__init__([(graph.rank[ref], ref) for ref, count in self._waiting.items() if count == 0])

    def succeeded(self, ref: str) -> None:
        self._finish(ref)
        for child in self._graph.dependants.get(ref, ()):
            self._waiting[child] -= 1
            if self._waiting[child] == 0 and child not in self._withdrawn:
                self._push(self._graph.rank[child], child)

    def failed(self, ref: str) -> frozenset[str]:
        """Mark `ref` as not done; returns the dependants newly withdrawn because of it."""
        self._finish(ref)
        return self.withdraw([ref])

    def withdraw(self, refs: Iterable[str]) -> frozenset[str]:
        """Never dispatch `refs`' dependants (nor `refs` not yet dispatched); returns the newly withdrawn."""
        refs = tuple(refs)
        newly = {r for r in refs if r not in self._finished and r not in self._in_flight}
        newly |= {r for r in self._graph.dependants_of(refs) if r not in self._finished}
        newly -= self._withdrawn
        self._withdrawn |= newly
        return frozenset(newly)

    def pending(self) -> tuple[str, ...]:
        """Refs neither finished, in flight nor withdrawn, in plan order (e.g. left by an interruption)."""
        gone = self._finished | self._withdrawn | self._in_flight
        return tuple(ref for ref in self._graph.refs if ref not in gone)
