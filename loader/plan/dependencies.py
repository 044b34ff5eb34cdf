"""Dependencies among the records a plan creates: reference cycles, and errors blocking dependants.

Pure, over RecordPlan.depends_on. `refuse_cycles` makes every record on a cycle an error;
`block_dependents` then marks records with errors, and everything depending on them, blocked.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import replace

from loader.findings import Finding
from loader.places import CellRef
from loader.plan.model import RecordPlan

# ---- reference cycles -----------------------------------------------------------------------

_CYCLE_PATHS_UP_TO = 50  # records in one cycle; above it, naming a shortest cycle per record costs too much


def refuse_cycles(
    drafts: Mapping[str, RecordPlan], cells_of: Callable[[str], Mapping[str, CellRef]]
) -> dict[str, RecordPlan]:
    """Make every record on a reference cycle among the records this plan creates an error.

    Such records can never be created: each waits for the id of the next. The error sits at the
    reference leading on round the cycle (`cells_of(ref)`: the cells of the record's references to
    the records it depends on, asked only of records on a cycle). Their dependencies inside the cycle are left out of
    `depends_on`: the records are blocked anyway, and the executor's graph must stay acyclic for
    the rest of the plan to be applied (`apply --partial`).
    """
    components = _cycles(drafts)
    if not components:  # the common case: nothing to change
        return dict(drafts)
    out = dict(drafts)
    for component in components:
        members = frozenset(component)
        for ref in component:
            plan = drafts[ref]
            cells = cells_of(ref)
            path = _cycle_through(ref, drafts, members) if len(component) <= _CYCLE_PATHS_UP_TO else None
            if path is None:
                shown = ", ".join(component[:5])
                message = (f"reference cycle among {len(component)} records ({shown}, …): each waits for "
                           "another to exist first, so none can be created; change one of these references")
                after = next(d for d in plan.depends_on if d in members)
            elif len(path) == 2:
                message = f"reference cycle: {ref} refers to itself, so it cannot be created; change the reference"
                after = ref
            else:
                message = (f"reference cycle: {' → '.join(path)}: each waits for the next to exist first, so none "
                           "can be created; change one of these references")
                after = path[1]
            finding = Finding("error", "reference-cycle", message, cells.get(after, plan.source))
            out[ref] = replace(plan, findings=(*plan.findings, finding),
                               depends_on=tuple(d for d in plan.depends_on if d not in members))
    return out


def _cycles(drafts: Mapping[str, RecordPlan]) -> list[list[str]]:
    """The strongly connected components of depends_on that hold a cycle, members in plan order.

    Only records that depend on another have edges (most records depend on none).
    """
    edges = {ref: [d for d in plan.depends_on if d in drafts] for ref, plan in drafts.items() if plan.depends_on}
    tarjan = _Tarjan(edges)
    for start, start_edges in edges.items():
        if start not in tarjan.index and start_edges:  # a record that depends on nothing here is on no cycle
            tarjan.visit(start)
    if not tarjan.found:
        return tarjan.found
    order = {ref: i for i, ref in enumerate(drafts)}
    return sorted((sorted(c, key=order.__getitem__) for c in tarjan.found), key=lambda c: order[c[0]])


class _Tarjan:
    """Tarjan's strongly connected components, iterative (a chain of references can be as long as a
    sheet): `found` the components that hold a cycle, in the order they close."""

    def __init__(self, edges: Mapping[str, list[str]]) -> None:
        self.edges = edges
        self.index: dict[str, int] = {}
        self.low: dict[str, int] = {}
        self.stack: list[str] = []
        self.on_stack: set[str] = set()
        self.found: list[list[str]] = []

    def visit(self, start: str) -> None:
        """Every ref reachable from `start`, depth first, each component closed as its root is left."""
        self._push(start)
        work = [(start, 0)]
        while work:
            ref, i = work[-1]
            ref_edges = self.edges.get(ref, ())
            if i < len(ref_edges):
                work[-1] = (ref, i + 1)
                self._follow(ref, ref_edges[i], work)
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                self.low[parent] = min(self.low[parent], self.low[ref])
            if self.low[ref] == self.index[ref]:
                self._close(ref)

    def _push(self, ref: str) -> None:
        self.index[ref] = self.low[ref] = len(self.index)
        self.stack.append(ref)
        self.on_stack.add(ref)

    def _follow(self, ref: str, dep: str, work: list[tuple[str, int]]) -> None:
        if dep not in self.index:
            self._push(dep)
            work.append((dep, 0))
        elif dep in self.on_stack:
            self.low[ref] = min(self.low[ref], self.index[dep])

    def _close(self, root: str) -> None:
        """The component whose root is `root`, off the stack; kept when it holds a cycle."""
        component: list[str] = []
        while not component or component[-1] != root:
            component.append(self.stack.pop())
            self.on_stack.discard(component[-1])
        if len(component) > 1 or root in self.edges.get(root, ()):
            self.found.append(component)


def _cycle_through(ref: str, drafts: Mapping[str, RecordPlan], members: frozenset[str]) -> list[str]:
    """A shortest cycle from `ref` back to itself, as refs (`ref` first and last)."""
    previous: dict[str, str] = {}
    queue = deque([ref])
    while queue:
        current = queue.popleft()
        for dep in drafts[current].depends_on:
            if dep == ref:
                back = [current]
                while back[-1] != ref:
                    back.append(previous[back[-1]])
                return [*reversed(back), ref]
            if dep in members and dep not in previous:
                previous[dep] = current
                queue.append(dep)
    raise AssertionError(f"{ref} is on no cycle")  # members of a strongly connected component always are


# ---- errors block their dependents ----------------------------------------------------------


def block_dependents(records: Mapping[str, RecordPlan]) -> dict[str, RecordPlan]:
    """Mark records with errors blocked, and every record depending on one, transitively.

    A breadth-first walk over dependants from every record with errors, in plan order: each
    blocked record names the record it waits for and, when that is not the one with errors, the
    record with errors behind it.
    """
    root_of = {ref: ref for ref, plan in records.items() if plan.findings and plan.errors}
    if not root_of:  # the common case: nothing is blocked
        return dict(records)
    dependants: dict[str, list[str]] = {}
    for ref, plan in records.items():
        for dep in plan.depends_on:
            if dep in records and dep != ref:
                dependants.setdefault(dep, []).append(ref)
    waits_for: dict[str, str] = {}
    queue = deque(root_of)
    while queue:
        ref = queue.popleft()
        for dependant in dependants.get(ref, ()):
            if dependant not in root_of:
                root_of[dependant] = root_of[ref]
                waits_for[dependant] = ref
                queue.append(dependant)
    out = dict(records)
    for ref in root_of:
        plan = records[ref]
        if ref not in waits_for:
            out[ref] = replace(plan, blocked=True)
        else:
            cause, root = waits_for[ref], root_of[ref]
            note = Finding("error", "blocked", f"blocked: depends on {cause}, which cannot be applied"
                           + (f" (errors in {root})" if root != cause else ""), plan.source)
            out[ref] = replace(plan, blocked=True, findings=(*plan.findings, note))
    return out
