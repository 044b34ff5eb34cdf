"""Desired x live -> Plan. Pure: no I/O, no clock; the same inputs give the same plan.

    plan = plan_changes(blocks, live, profile, header=PlanHeader(...))

`blocks` are the mapping's blocks of desired records (`loader.records.BlockRecords`, or anything
with the same attributes); `live` maps an entity name to its live records as the list requests
returned them. The rules are contract section 5; `loader.plan_fields` compares one record's fields,
`loader.resolve` matches keys and resolves references.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from loader.compare import same
from loader.model import DesiredRecord, Ref, display_value, quoted
from loader.plan_fields import CUSTOM, plan_fields
from loader.plan_model import Action, BlockPlan, Finding, Plan, RecordPlan
from loader.profile import Profile
from loader.resolve import Entry, LiveRecord, Resolver, key_text, show_key, unique_clashes


class BlockInput(Protocol):
    """What the planner needs of a block (loader.records.BlockRecords has these)."""

    @property
    def block(self) -> str: ...
    @property
    def entity(self) -> str: ...
    @property
    def source_file(self) -> str: ...
    @property
    def sheet(self) -> str | None: ...
    @property
    def key_fields(self) -> tuple[str, ...]: ...
    @property
    def records(self) -> Sequence[DesiredRecord]: ...
    @property
    def findings(self) -> Sequence[Finding]: ...


@dataclass(frozen=True)
class PlanHeader:
    """Where a plan is for and what it was made from (copied into the Plan as is)."""

    environment: str
    api_version: str | None = None
    base_url: str = ""
    env_name: str = "sandbox"
    fingerprints: Mapping[str, str] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    created_at: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def plan_changes(
    blocks: Sequence[BlockInput],
    live: Mapping[str, Sequence[LiveRecord]],
    profile: Profile,
    *,
    header: PlanHeader,
) -> Plan:
    """The plan: per block, each desired record as create / update / unchanged with its findings."""
    entries, merge_findings, owner = _merge(blocks)
    resolver = Resolver(entries, live)
    clashes: dict[str, list[str]] = {}
    for group in profile.unique_groups.values():
        for ref, messages in unique_clashes(entries, resolver, group, _describe).items():
            clashes.setdefault(ref, []).extend(messages)
    drafts: dict[str, RecordPlan] = {}
    depends_at: dict[str, Mapping[str, str]] = {}
    for e in entries:
        drafts[e.ref], depends_at[e.ref] = _plan_record(
            e, resolver, profile, merge_findings.get(e.ref, []), clashes.get(e.ref, [])
        )
    planned = block_dependents(_refuse_cycles(drafts, depends_at))
    matched = {
        str(live_rec["id"]) for e in entries if (live_rec := resolver.match(e)) is not None and live_rec.get("id")
    }
    first_block_of: dict[str, str] = {}
    for b in blocks:
        first_block_of.setdefault(b.entity, b.block)
    block_plans = []
    for index, b in enumerate(blocks):
        not_in_source = 0
        if first_block_of[b.entity] == b.block:
            not_in_source = sum(1 for rec in resolver.live_records(b.entity) if str(rec.get("id")) not in matched)
        records = tuple(planned[ref] for ref in owner[index])
        block_plans.append(
            BlockPlan(b.block, b.entity, b.source_file, b.sheet, records, not_in_source, tuple(b.findings))
        )
    return Plan(
        environment=header.environment,
        api_version=header.api_version,
        base_url=header.base_url,
        fingerprints=dict(header.fingerprints),
        blocks=tuple(block_plans),
        findings=(*header.findings, *_repeated_block_names(blocks)),
        created_at=header.created_at,
        env_name=header.env_name,
        extra=dict(header.extra),
    )


def _repeated_block_names(blocks: Sequence[BlockInput]) -> list[Finding]:
    """Record refs start with the block name, so names must be unique across the files planned together."""
    seen: set[str] = set()
    findings = []
    for b in blocks:
        if b.block in seen:
            message = f"two blocks are named {b.block!r}: rename one (block names are unique across the mapping files)"
            findings.append(Finding("error", "repeated-block-name", message, str(getattr(b, "place", "")) or None))
        seen.add(b.block)
    return findings


def _describe(rec: LiveRecord) -> str:
    return f"{rec.get('type') or 'record'} {rec.get('id')} {rec.get('name')!r}"


# ---- merging the source across blocks ------------------------------------------------------


def _merge(blocks: Sequence[BlockInput]) -> tuple[list[Entry], dict[str, list[Finding]], list[list[str]]]:
    """One entry per (entity, key): rows of several blocks that agree merge; disagreements are errors.

    Returns the entries in source order, findings per entry ref, and the entry refs of each block.
    """
    entries: dict[tuple[Any, ...], Entry] = {}
    findings: dict[str, list[Finding]] = {}
    owner: list[list[str]] = []
    for b in blocks:
        refs: list[str] = []
        owner.append(refs)
        for rec in b.records:
            identity = (rec.entity, b.key_fields, _hashable(rec.key))
            first = entries.get(identity)
            if first is None:
                ref = f"{b.block}/{show_key(rec.key)}"
                entries[identity] = Entry(ref, rec, tuple(b.key_fields))
                refs.append(ref)
                continue
            merged, conflicts = _merge_record(first.record, rec)
            entries[identity] = replace(first, record=merged)
            findings.setdefault(first.ref, []).extend(conflicts)
    return list(entries.values()), findings, owner


def _hashable(key: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(key_text(p) if not isinstance(p, Ref) else p for p in key)


def _merge_record(first: DesiredRecord, other: DesiredRecord) -> tuple[DesiredRecord, list[Finding]]:
    fields = dict(first.fields)
    cells = dict(first.cells)
    conflicts = []
    for name, value in other.fields.items():
        if name == CUSTOM and isinstance(fields.get(name), Mapping) and isinstance(value, Mapping):
            labels = dict(fields[name])
            for label, v in value.items():
                cell_name = f"{CUSTOM}.{label}"
                if label in labels and not same(labels[label], v):
                    conflicts.append(_conflict(first, other, cell_name, labels[label], v))
                else:
                    labels.setdefault(label, v)
                    cells.setdefault(cell_name, other.place(cell_name))
            fields[name] = labels
        elif name in fields and not _same_source(fields[name], value):
            conflicts.append(_conflict(first, other, name, fields[name], value))
        elif name not in fields:
            fields[name] = value
            cells[name] = other.place(name)
    merged = replace(first, fields=fields, cells=cells, pii=first.pii | other.pii)
    return merged, conflicts


def _same_source(a: Any, b: Any) -> bool:
    if isinstance(a, Ref) or isinstance(b, Ref) or isinstance(a, tuple | list):
        return a == b or (isinstance(a, tuple | list) and isinstance(b, tuple | list) and list(a) == list(b))
    return same(a, b)


def _conflict(first: DesiredRecord, other: DesiredRecord, name: str, a: Any, b: Any) -> Finding:
    pii = name in first.pii or name in other.pii
    shown_a, shown_b = (quoted(display_value(v), pii) for v in (a, b))
    return Finding(
        "error",
        "conflicting-source-values",
        f"{first.entity} {show_key(first.key)} is given different {name} values: {shown_a} at "
        f"{first.place(name)} and {shown_b} at {other.place(name)}",
        str(first.place(name)),
    )


# ---- one record ----------------------------------------------------------------------------


def _plan_record(
    entry: Entry, resolver: Resolver, profile: Profile, merge_findings: list[Finding], clashes: list[str]
) -> tuple[RecordPlan, Mapping[str, str]]:
    """The record's plan, and the cell of each reference to a record this plan creates."""
    rec = entry.record
    entity = profile.entity(rec.entity)
    findings = list(merge_findings)
    if clashes:
        key_cell = str(rec.place(entry.key_fields[0])) if entry.key_fields else str(rec.row)
        findings += [Finding("error", "code-in-use", message, key_cell) for message in clashes]
    live = resolver.match(entry)
    parts = resolver.key_parts(entry)
    if live is None:
        near = resolver.near_duplicate(entry, parts)
        if near is not None:
            findings.append(_near_duplicate(entry, near))
    fp = plan_fields(rec, live, entity, resolver)
    findings += fp.findings
    if live is None:
        action = Action.CREATE
    elif fp.payload or fp.status_changed:
        action = Action.UPDATE
    else:
        action = Action.UNCHANGED
    updated = ((live or {}).get("metadata") or {}).get("updated") or {}
    return RecordPlan(
        ref=entry.ref,
        block=rec.block,
        entity=rec.entity,
        key=tuple(_key_json(p) for p in rec.key),
        action=action,
        payload=fp.payload,
        source=str(rec.row),
        live_id=str(live["id"]) if live is not None and live.get("id") else None,
        live_updated_time=updated.get("time"),
        changes=tuple(fp.changes),
        status_path=fp.status_path,
        depends_on=tuple(fp.depends_on),
        findings=tuple(findings),
        row=rec.row.row,
    ), fp.depends_at


def _key_json(part: Any) -> Any:
    if isinstance(part, Ref):
        return part.values[0] if len(part.values) == 1 else list(part.values)
    return part


def _near_duplicate(entry: Entry, near: LiveRecord) -> Finding:
    rec = entry.record
    desired = [display_value(p) for p in rec.key]
    found = [near.get(f) for f in entry.key_fields]
    if len(entry.key_fields) == 1:
        message = f"will create {desired[0]!r}; a live {rec.entity} has {entry.key_fields[0]} {found[0]!r}"
    else:
        shown = ", ".join(f"{f}={v!r}" for f, v in zip(entry.key_fields, found, strict=True))
        message = f"will create {rec.entity} {show_key(rec.key)!r}; a live {rec.entity} has {shown}"
    where = str(rec.place(entry.key_fields[-1] if len(entry.key_fields) > 1 else entry.key_fields[0]))
    return Finding("warning", "near-duplicate-key", message + " (keys match exactly: check the case and spaces)", where)


# ---- reference cycles -----------------------------------------------------------------------

_CYCLE_PATHS_UP_TO = 50  # records in one cycle; above it, naming a shortest cycle per record costs too much


def _refuse_cycles(
    drafts: Mapping[str, RecordPlan], depends_at: Mapping[str, Mapping[str, str]]
) -> dict[str, RecordPlan]:
    """Make every record on a reference cycle among the records this plan creates an error.

    Such records can never be created: each waits for the id of the next. The error sits at the
    reference leading on round the cycle. Their dependencies inside the cycle are left out of
    `depends_on`: the records are blocked anyway, and the executor's graph must stay acyclic for
    the rest of the plan to be applied (`apply --partial`).
    """
    out = dict(drafts)
    for component in _cycles(drafts):
        members = frozenset(component)
        for ref in component:
            plan = drafts[ref]
            cells = depends_at.get(ref, {})
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

    Tarjan's algorithm, iterative: a chain of references can be as long as a sheet.
    """
    order = {ref: i for i, ref in enumerate(drafts)}
    edges = {ref: [d for d in plan.depends_on if d in order] for ref, plan in drafts.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in drafts:
        if start in index:
            continue
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        work = [(start, 0)]
        while work:
            ref, i = work[-1]
            if i < len(edges[ref]):
                work[-1] = (ref, i + 1)
                dep = edges[ref][i]
                if dep not in index:
                    index[dep] = low[dep] = len(index)
                    stack.append(dep)
                    on_stack.add(dep)
                    work.append((dep, 0))
                elif dep in on_stack:
                    low[ref] = min(low[ref], index[dep])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[ref])
            if low[ref] == index[ref]:
                component: list[str] = []
                while not component or component[-1] != ref:
                    component.append(stack.pop())
                    on_stack.discard(component[-1])
                if len(component) > 1 or ref in edges[ref]:
                    found.append(sorted(component, key=order.__getitem__))
    return sorted(found, key=lambda c: order[c[0]])


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
    dependants: dict[str, list[str]] = {ref: [] for ref in records}
    for ref, plan in records.items():
        for dep in plan.depends_on:
            if dep in dependants and dep != ref:
                dependants[dep].append(ref)
    root_of = {ref: ref for ref, plan in records.items() if plan.errors}
    waits_for: dict[str, str] = {}
    queue = deque(root_of)
    while queue:
        ref = queue.popleft()
        for dependant in dependants[ref]:
            if dependant not in root_of:
                root_of[dependant] = root_of[ref]
                waits_for[dependant] = ref
                queue.append(dependant)
    out = {}
    for ref, plan in records.items():
        if ref not in root_of:
            out[ref] = plan
        elif ref not in waits_for:
            out[ref] = replace(plan, blocked=True)
        else:
            cause, root = waits_for[ref], root_of[ref]
            note = Finding("error", "blocked", f"blocked: depends on {cause}, which cannot be applied"
                           + (f" (errors in {root})" if root != cause else ""), plan.source)
            out[ref] = replace(plan, blocked=True, findings=(*plan.findings, note))
    return out
