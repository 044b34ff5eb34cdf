"""Desired x live -> Plan. Pure: no I/O, no clock; the same inputs give the same plan.

    plan = plan_changes(blocks, live, profile, header=PlanHeader(...))

`blocks` are the mapping's blocks of desired records (`loader.source.sources.BlockRecords`, or anything
with the same attributes); `live` maps an entity name to its live records as the list requests
returned them. The rules are contract section 5; `loader.plan.fields` compares one record's fields,
`loader.plan.resolve` matches keys and resolves references.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol

from loader.event_loop import GiveWay, never_give_way
from loader.findings import Finding
from loader.places import CellRef
from loader.plan.dependencies import block_dependents, refuse_cycles
from loader.plan.fields import FieldRules, plan_fields, reference_cell
from loader.plan.model import (
    Action,
    BlockedRow,
    BlockPlan,
    FieldRule,
    NotInSource,
    Plan,
    RecordPlan,
    SourceReading,
    record_plan,
)
from loader.plan.resolve import (
    Entry,
    LiveRecord,
    Resolver,
    UniqueClaims,
    all_text,
    exact_key,
    key_text,
    show_key,
    unique_clashes,
)
from loader.profile import Profile
from loader.record_fields import CUSTOM
from loader.source.equality import same_source_value
from loader.source.records import DesiredRecord, Ref, display_value, quoted


class BlockInput(Protocol):
    """What the planner needs of a block (loader.source.sources.BlockRecords has these)."""

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
    @property
    def header_row(self) -> int: ...
    @property
    def encoding(self) -> str | None: ...
    @property
    def delimiter(self) -> str | None: ...


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


class Merged(NamedTuple):
    """The blocks' records merged across blocks (`merged_entries`)."""

    entries: list[Entry]  # one per (entity, key), in source order
    findings: dict[str, list[Finding]]  # per entry ref: the values its rows disagree on
    owner: list[list[int]]  # per block: where its entries are in `entries`


def merged_entries(blocks: Sequence[BlockInput]) -> Merged:
    """One entry per (entity, key): rows of several blocks that agree merge; disagreements are errors."""
    return Merged(*_merge(blocks))


@dataclass
class EarlyDrafts:
    """Record plans made before the plan's last live records came in (`loader.plan.early`), each one
    the plan `plan_changes` makes of its entry: by entry position in `merged.entries`."""

    merged: Merged
    # The claims on each unique group's values (profile.unique_groups, in order), live records added
    # as they came in.
    claims: list[UniqueClaims]
    plans: dict[int, RecordPlan] = field(default_factory=dict)
    references: dict[int, Mapping[str, tuple[Ref, str]]] = field(default_factory=dict)  # to records created


def plan_changes(
    blocks: Sequence[BlockInput],
    live: Mapping[str, Sequence[LiveRecord]],
    profile: Profile,
    *,
    header: PlanHeader,
    early: EarlyDrafts | None = None,
    give_way: GiveWay = never_give_way,
) -> Plan:
    """The plan: per block, each desired record as create / update / unchanged with its findings.

    `early`: the blocks' merged entries and the plans of those drafted while `live` was still arriving
    (the same plans: only a record whose code another record claims is planned again, with that finding).
    `give_way` is called after each record planned here (`loader.event_loop`: run in a worker thread).
    """
    entries, merge_findings, owner = early.merged if early is not None else _merge(blocks)
    resolver = Resolver(entries, live)
    clashes: dict[str, list[str]] = {}
    groups = profile.unique_groups.values()
    claimed = early.claims if early is not None else None
    for index, group in enumerate(groups):
        if claimed is not None:  # most live claims added as they came in: the rest now
            claims = claimed[index]
            for entity in claims.members:
                claims.catch_up(entity, resolver.live_records(entity))
            found = claims.clashes(_describe)
        else:
            found = unique_clashes(entries, resolver, group, _describe)
        for ref, messages in found.items():
            clashes.setdefault(ref, []).extend(messages)
    drafts = _plan_entries(entries, resolver, profile, merge_findings, clashes, early, give_way)
    planned = drafts.planned
    if drafts.linked:  # both keep the order of the records they are given
        settled = block_dependents(refuse_cycles(drafts.linked, drafts.referring.cells))
        for ref, plan in settled.items():
            for at in drafts.linked_at[ref]:
                planned[at] = plan
    matched = drafts.matched
    first_block_of: dict[str, str] = {}
    for b in blocks:
        first_block_of.setdefault(b.entity, b.block)
    blocked_rows = [_blocked_rows(b, resolver, matched) for b in blocks]
    held = {row.live_id for rows in blocked_rows for row in rows if row.live_id}
    block_plans = []
    for index, b in enumerate(blocks):
        absent: tuple[NotInSource, ...] = ()
        if first_block_of[b.entity] == b.block:
            absent = tuple(
                NotInSource(tuple(key_text(rec.get(f)) for f in b.key_fields), str(rec.get("id")))
                for rec in resolver.live_records(b.entity)
                if (live_id := str(rec.get("id"))) not in matched and live_id not in held
            )
        records = tuple(map(planned.__getitem__, owner[index]))
        block_plans.append(
            BlockPlan(
                b.block, b.entity, b.source_file, b.sheet, records, not_in_source_records=absent,
                findings=tuple(b.findings), key_fields=tuple(b.key_fields), blocked_rows=blocked_rows[index],
                reading=SourceReading(b.header_row, b.encoding, b.delimiter),
                field_rules=tuple(FieldRule(*rule) for rule in getattr(b, "field_rules", ())),
            )
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


def _blocked_rows(b: BlockInput, resolver: Resolver, matched: set[str]) -> tuple[BlockedRow, ...]:
    """The block's rows left out by errors, each with the live record its key names (if any, and unmatched)."""
    left_out = getattr(b, "left_out", ())
    if not left_out:  # the usual block: no live index to build (a collection's, 0.05 s at 87,500 records)
        return ()
    rows = []
    index = resolver.live_index(b.entity, tuple(b.key_fields)) if b.key_fields else {}
    for left in left_out:
        live_id = None
        if left.key is not None and not any(isinstance(p, Ref) for p in left.key):
            live = index.get(tuple(key_text(p) for p in left.key))
            if live is not None and live.get("id") and str(live["id"]) not in matched:
                live_id = str(live["id"])
        key = None if left.key is None else tuple(_key_json(p) for p in left.key)
        rows.append(BlockedRow(left.row, left.row.row, key, live_id, tuple(left.errors)))
    return tuple(rows)


def _repeated_block_names(blocks: Sequence[BlockInput]) -> list[Finding]:
    """Record refs start with the block name, so names must be unique across the files planned together."""
    seen: set[str] = set()
    findings = []
    for b in blocks:
        if b.block in seen:
            message = f"two blocks are named {b.block!r}: rename one (block names are unique across the mapping files)"
            findings.append(Finding("error", "repeated-block-name", message, getattr(b, "place", None)))
        seen.add(b.block)
    return findings


def _describe(rec: LiveRecord) -> str:
    return f"{rec.get('type') or 'record'} {rec.get('id')} {rec.get('name')!r}"


# ---- merging the source across blocks ------------------------------------------------------


def _merge(blocks: Sequence[BlockInput]) -> tuple[list[Entry], dict[str, list[Finding]], list[list[int]]]:
    """One entry per (entity, key): rows of several blocks that agree merge; disagreements are errors.

    Returns the entries in source order, findings per entry ref, and where the entries of each block are.
    """
    entries: list[Entry] = []
    positions: dict[tuple[str, tuple[str, ...]], dict[tuple[Any, ...], int]] = {}  # entity, key fields -> key -> index
    findings: dict[str, list[Finding]] = {}
    owner: list[list[int]] = []
    new_tuple = tuple.__new__
    for b in blocks:
        mine: list[int] = []
        owner.append(mine)
        key_fields = tuple(b.key_fields)
        prefix = f"{b.block}/"
        entity: str | None = None
        at: dict[tuple[Any, ...], int] = {}
        for rec in b.records:
            if rec.entity != entity:  # a block's records are of its entity: this is looked up once a block
                entity = rec.entity
                at = positions.setdefault((entity, key_fields), {})
            key = rec.key
            if type(key) is tuple and ((len(key) == 1 and type(key[0]) is str) or all_text(key)):
                # the common case: texts are their own exact and shown form (one text checked without a call)
                exact: tuple[Any, ...] | None = key
                identity, shown = key, "/".join(key)
            elif type(key) is tuple and _texts_and_one_text_refs(key):  # a credential's: (applicant, type, name)
                # what the general case gives such a key, without its walks: no exact form, itself as identity
                exact, identity = None, key
                shown = "/".join([p if type(p) is str else p.values[0] for p in key])
            else:
                exact, shown = exact_key(key), show_key(key)
                identity = exact if exact is not None else _hashable(key)
            new = len(entries)
            index = at.setdefault(identity, new)  # one lookup: the key's tuple hashed once, not twice
            if index == new:
                mine.append(new)
                # Entry(...), without its Python __new__
                entries.append(new_tuple(Entry, (prefix + shown, rec, key_fields, exact)))
                continue
            first = entries[index]
            merged, conflicts = _merge_record(first.record, rec)
            entries[index] = first._replace(record=merged)
            findings.setdefault(first.ref, []).extend(conflicts)
    return entries, findings, owner


def _texts_and_one_text_refs(key: tuple[Any, ...]) -> bool:
    """Whether each part is a text or a reference by one text (shown as that text)."""
    for part in key:
        if type(part) is not str and not (type(part) is Ref and len(part.values) == 1 and type(part.values[0]) is str):
            return False
    return True


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
                if label in labels and not same_source_value(labels[label], v):
                    conflicts.append(_conflict(first, other, cell_name, labels[label], v))
                else:
                    labels.setdefault(label, v)
                    cells.setdefault(cell_name, other.place(cell_name))
            fields[name] = labels
        elif name in fields and not same_source_value(fields[name], value):
            conflicts.append(_conflict(first, other, name, fields[name], value))
        elif name not in fields:
            fields[name] = value
            cells[name] = other.place(name)
    also_rows = (*first.also_rows, (other.block, other.row), *other.also_rows)
    merged = replace(first, fields=fields, cells=cells, pii=first.pii | other.pii, also_rows=also_rows)
    return merged, conflicts


def _conflict(first: DesiredRecord, other: DesiredRecord, name: str, a: Any, b: Any) -> Finding:
    pii = name in first.pii or name in other.pii
    shown_a, shown_b = (quoted(display_value(v), pii) for v in (a, b))
    return Finding(
        "error",
        "conflicting-source-values",
        f"{first.entity} {show_key(first.key)} is given different {name} values: {shown_a} at "
        f"{first.place(name)} and {shown_b} at {other.place(name)}",
        first.place(name),
    )


# ---- one record ----------------------------------------------------------------------------


class _Drafts(NamedTuple):
    """The records planned, before cycles and errors are looked at."""

    planned: list[RecordPlan]  # in the order of the entries
    # The records that depend on another or have findings, by ref, and where they are in `planned`:
    # all that refuse_cycles and block_dependents need to see (a dict of every record took 5% of the diff).
    linked: dict[str, RecordPlan]
    linked_at: dict[str, list[int]]  # several places only when two blocks share a name (an error of its own)
    referring: _ReferenceCells
    matched: set[str]  # the live ids matched


def _plan_entries(
    entries: Sequence[Entry], resolver: Resolver, profile: Profile, merge_findings: Mapping[str, Sequence[Finding]],
    clashes: Mapping[str, Sequence[str]], early: EarlyDrafts | None = None, give_way: GiveWay = never_give_way,
) -> _Drafts:
    """Each entry's plan, in order (its early draft, when it has one and no code clash).

    A block's entries are together and of one entity and key: its field rules and live index are
    looked up once a run of them, and a key of texts matched here (Resolver.match, without its
    call and lookups, was 6% of the diff). What the rest of the plan needs of each record is noted
    here too, while it is at hand (a second pass over 250,000 records misses the cache on each).
    """
    drafts = _Drafts([], {}, {}, _ReferenceCells(), set())
    planned, linked, linked_at, matched = drafts.planned, drafts.linked, drafts.linked_at, drafts.matched
    rules: dict[str, FieldRules] = {}
    entity, key_fields, index, entity_rules = None, None, None, None
    drafted = early.plans if early is not None else {}
    for position, e in enumerate(entries):
        draft = drafted.get(position) if drafted else None
        if draft is not None and clashes and e.ref in clashes:
            draft = None
        if draft is not None:
            assert early is not None
            references = early.references.get(position)
            if references is not None:
                drafts.referring.add(e.ref, e.record, references)
        else:
            if e.record.entity != entity or e.key_fields is not key_fields:
                entity, key_fields = e.record.entity, e.key_fields
                index = resolver.live_index(entity, key_fields)
                entity_rules = rules.get(entity)
                if entity_rules is None:
                    entity_rules = rules[entity] = FieldRules(profile.entity(entity))
            assert index is not None and entity_rules is not None  # set by the first entry
            live = index.get(e.exact_key) if e.exact_key is not None else resolver.match(e)
            draft = _plan_record(
                e, live, resolver, entity_rules,
                merge_findings.get(e.ref, ()) if merge_findings else (), clashes.get(e.ref, ()) if clashes else (),
                drafts.referring,
            )
            give_way()
        if draft.depends_on or draft.findings:
            linked[e.ref] = draft
            linked_at.setdefault(e.ref, []).append(len(planned))
        planned.append(draft)
        if draft.live_id is not None:
            matched.add(draft.live_id)
    return drafts


def draft_early(
    early: EarlyDrafts, position: int, live: LiveRecord | None, resolver: Resolver, rules: FieldRules
) -> RecordPlan | None:
    """The plan of entry `position` against `live`, its match, noted in `early`: the plan `plan_changes`
    will make of it, when `resolver` has whole every collection the entry's references can reach. A
    draft that showed a live id no record of `resolver` has (one of a collection still arriving) is
    not noted: it is planned at the end (None)."""
    entry = early.merged.entries[position]
    referring = _ReferenceCells()
    misses = resolver.label_misses
    plan = _plan_record(entry, live, resolver, rules, early.merged.findings.get(entry.ref, ()), (), referring)
    if resolver.label_misses != misses:
        return None
    early.plans[position] = plan
    references = referring.taken(entry.ref)
    if references is not None:
        early.references[position] = references
    return plan


def _plan_record(
    entry: Entry, live: LiveRecord | None, resolver: Resolver, rules: FieldRules, merge_findings: Sequence[Finding],
    clashes: Sequence[str], referring: _ReferenceCells,
) -> RecordPlan:
    """The record's plan against `live`, its match; its references to records this plan creates noted in `referring`."""
    rec = entry.record
    findings = _source_findings(entry, merge_findings, clashes) if merge_findings or clashes else None
    if live is None:
        near = resolver.near_duplicate(entry)
        if near is not None:
            findings = [*(findings or ()), _near_duplicate(entry, near)]
    fp = plan_fields(rec, live, rules, resolver)
    if fp.depends_at:
        referring.add(entry.ref, rec, fp.depends_at)
    if fp.findings:
        findings = [*(findings or ()), *fp.findings]
    if live is None:
        action, live_id, updated = _CREATE, None, None
    else:
        action = _UPDATE if fp.payload or fp.status_changed else _UNCHANGED
        live_id = live.get("id")
        live_id = str(live_id) if live_id else None
        # The live record's metadata.updated.time (None when it has none).
        updated = ((live.get("metadata") or _NOTHING).get("updated") or _NOTHING).get("time")
    also_rows = tuple((block, ref.row) for block, ref in rec.also_rows if ref.row is not None) if rec.also_rows else ()
    return record_plan(  # positionally, in RecordPlan's field order: a call with 16 keywords costs twice as much
        entry.ref,
        rec.block,
        rec.entity,
        rec.key if entry.exact_key is rec.key else _plan_key(rec.key),  # a key of texts is its own exact key
        action,
        fp.payload,
        rec.row,
        live_id,
        updated,
        tuple(fp.changes),
        fp.status_path,
        fp.depends_on,
        tuple(findings) if findings else (),
        rec.row.row,
        fp.refers_to,
        also_rows,
    )


class _ReferenceCells:
    """The cell of each reference to a record this plan creates, per record, as refuse_cycles asks for them.

    The cells are worked out when asked for, and it asks only for records on a reference cycle.
    """

    def __init__(self) -> None:
        self._references: dict[str, tuple[DesiredRecord, Mapping[str, tuple[Ref, str]]]] = {}

    def add(self, ref: str, record: DesiredRecord, references: Mapping[str, tuple[Ref, str]]) -> None:
        self._references[ref] = (record, references)

    def taken(self, ref: str) -> Mapping[str, tuple[Ref, str]] | None:
        """The references noted for `ref` (None: none), no longer noted here."""
        noted = self._references.pop(ref, None)
        return None if noted is None else noted[1]

    def cells(self, ref: str) -> Mapping[str, CellRef]:
        """Dependency ref -> the cell of the record's reference to it (asked only of a record that has one)."""
        record, references = self._references[ref]
        return {dep: reference_cell(reference, record, name) for dep, (reference, name) in references.items()}


_NOTHING: Mapping[str, Any] = MappingProxyType({})
# An Enum member looked up on its class costs about three plain attribute lookups (see loader.plan.fields).
_CREATE, _UPDATE, _UNCHANGED = Action.CREATE, Action.UPDATE, Action.UNCHANGED


def _source_findings(entry: Entry, merge_findings: Sequence[Finding], clashes: Sequence[str]) -> list[Finding]:
    """The findings of the record's source rows: values its rows disagree on, codes other records claim."""
    rec = entry.record
    findings = list(merge_findings)
    if clashes:
        key_cell = rec.place(entry.key_fields[0]) if entry.key_fields else rec.row
        findings += [Finding("error", "code-in-use", message, key_cell) for message in clashes]
    return findings


def _plan_key(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """The key as the plan shows it: references by their values (a key of texts as it is)."""
    if all_text(key):
        return key if type(key) is tuple else tuple(key)
    return tuple([p if type(p) is str else _key_json(p) for p in key])


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
    where = rec.place(entry.key_fields[-1] if len(entry.key_fields) > 1 else entry.key_fields[0])
    return Finding("warning", "near-duplicate-key", message + " (keys match exactly: check the case and spaces)", where)
