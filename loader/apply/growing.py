"""The walk of a plan whose records arrive while it is applied (a sealed plan.json read during the
apply: `loader.plan.plan_stream`), with `loader.apply.graph.Scheduler`'s interface.

Records are added a batch at a time in plan order, each after every record it depends on (the
seal vouches for that: `PlanCounts.ordered`), so no cycle can form and no dependency is missing. A
record added after one of its dependencies ended without success is withdrawn as it arrives, and
`add` names the record whose end withdrew it (`cause`), so it is skipped with the message it would
have had had it been there from the start.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from loader.apply.graph import ReadyRecords, rank_of
from loader.errors import PlanError
from loader.plan.model import RecordPlan


class GrowingScheduler(ReadyRecords):
    """A Scheduler over records added as they are read. Not thread-safe; used from one event loop."""

    def __init__(self, creation_order: Iterable[str] = ()) -> None:
        self._entity_rank = {name: i for i, name in enumerate(creation_order)}
        self.refs: list[str] = []
        self._rank: dict[str, int] = {}
        self._dependants: dict[str, list[str]] = {}
        self._waiting: dict[str, int] = {}
        super().__init__([])
        self._succeeded: set[str] = set()
        self.cause: dict[str, tuple[str, bool]] = {}  # ref ended or withdrawn -> (the ref that ended, it failed)
        self._when: dict[str, int] = {}  # ref in `cause` -> when it got there (the first end withdraws)

    def add(self, records: Sequence[RecordPlan]) -> dict[str, tuple[str, bool]]:
        """Walk `records` too; returns those withdrawn at once, each with the `cause` of the dependency
        that ended without success. PlanError for a record that comes before one it depends on."""
        withdrawn: dict[str, tuple[str, bool]] = {}
        for record in records:
            ref = record.ref
            if ref in self._rank:
                raise PlanError(f"the plan holds record {ref!r} twice", where=record.source)
            self._rank[ref] = rank_of(self._entity_rank.get(record.entity, len(self._entity_rank)), len(self.refs))
            self.refs.append(ref)
            self._dependants[ref] = []
            waiting = 0
            ended: list[str] = []  # dependencies that ended without success, or were withdrawn
            for dep in dict.fromkeys(record.depends_on):
                if dep == ref:
                    continue
                if dep not in self._rank:
                    raise PlanError(f"record {ref!r} of the plan comes before {dep!r}, which it depends on",
                                    where=record.source)
                if dep in self._withdrawn or (dep in self._finished and dep not in self._succeeded):
                    ended.append(dep)
                self._dependants[dep].append(ref)
                waiting += dep not in self._succeeded
            self._waiting[ref] = waiting
            if ended:
                first = min(ended, key=self._when.__getitem__)
                self._withdrawn.add(ref)
                self._caused(ref, self.cause[first])
                withdrawn[ref] = self.cause[first]
            elif waiting == 0:
                self._push(self._rank[ref], ref)
        return withdrawn

    def succeeded(self, ref: str) -> None:
        self._finish(ref)
        self._succeeded.add(ref)
        for child in self._dependants.get(ref, ()):
            self._waiting[child] -= 1
            if self._waiting[child] == 0 and child not in self._withdrawn:
                self._push(self._rank[child], child)

    def failed(self, ref: str) -> frozenset[str]:
        """Mark `ref` as not done; returns the dependants newly withdrawn because of it."""
        self._finish(ref)
        self._caused(ref, (ref, True))
        return self._withdraw((ref,), failed=True)

    def withdraw(self, refs: Iterable[str]) -> frozenset[str]:
        """Never dispatch `refs`' dependants (nor `refs` not yet dispatched); returns the newly withdrawn."""
        return self._withdraw(tuple(refs), failed=False)

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

    def _caused(self, ref: str, cause: tuple[str, bool]) -> None:
        if ref not in self.cause:
            self.cause[ref] = cause
            self._when[ref] = len(self._when)

    def pending(self) -> tuple[str, ...]:
        """Refs neither finished, in flight nor withdrawn, in plan order (e.g. left by an interruption)."""
        return tuple(ref for ref in self.refs
                     if ref not in self._finished and ref not in self._withdrawn and ref not in self._in_flight)
