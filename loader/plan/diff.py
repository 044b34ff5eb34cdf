"""Desired x live -> Plan. Pure: no I/O, no clock; the same inputs give the same plan.

    plan = plan_changes(blocks, live, profile, header=PlanHeader(...))

`blocks` are the mapping's blocks of desired records (`loader.source.sources.BlockRecords`, or
anything with the same attributes); `live` maps an entity name to its live records as the list
requests returned them. The rules are contract section 5. The steps, each its own module:
`loader.plan.merge` merges the blocks' rows into one entry per record, `loader.plan.resolve`
matches keys and resolves references, `loader.plan.record` plans one record (its fields compared by
`loader.plan.fields`), and `loader.plan.dependencies` refuses reference cycles and blocks the
dependants of records with errors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

from loader.findings import Finding
from loader.places import CellRef
from loader.plan.decisions_pass import SheetWins
from loader.plan.dependencies import block_dependents, refuse_cycles
from loader.plan.fields import FieldRules
from loader.plan.history_checks import refuse_wrong_history
from loader.plan.history_index import indexes
from loader.plan.history_pass import with_history, without_history
from loader.plan.merge import merged_entries
from loader.plan.model import BlockedRow, BlockPlan, FieldRule, NotInSource, Plan, RecordPlan, SourceReading
from loader.plan.record import key_json, plan_record, reference_cells
from loader.plan.renumber import FormerKeys, plan_renumbering, renumbered
from loader.plan.resolve import Entry, LiveRecord, Resolver, index_key, key_text
from loader.plan.unique_claims import unique_clashes
from loader.profile import Profile
from loader.source.records import DesiredRecord, Ref

if TYPE_CHECKING:
    from loader.history.store import History


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
    profile_fingerprint: str | None = None  # the entity profile's (`Plan.profile_fingerprint`)


def plan_changes(
    blocks: Sequence[BlockInput],
    live: Mapping[str, Sequence[LiveRecord]],
    profile: Profile,
    *,
    header: PlanHeader,
    history: History | None = None,
    service_user_ids: Sequence[str] = (),
    sheet_wins: SheetWins | None = None,
    unselected: Mapping[str, Sequence[str]] | None = None,
) -> Plan:
    """The plan: per block, each desired record as create / update / unchanged with its findings.

    `history`: compared three-way against it (`loader.plan.history_pass`), once
    `loader.plan.history_checks` refused one of another database or behind the service
    (`service_user_ids`: the environment's own users); None, or a history with nothing recorded
    yet: two-way. `sheet_wins`: the conflicts reviewers decided for the sheet. `unselected`: `Resolver`'s.
    """
    merged = merged_entries(blocks)
    entries, merge_findings, owner, _ = merged
    recorded = history if history is not None and history.started else None
    renumbering = plan_renumbering(blocks, entries, live, recorded)
    formers = None if recorded is None else FormerKeys(recorded, live, lambda entity: profile.entity(entity).key)
    resolver = Resolver(entries, live, aliases=renumbering.aliases, released=renumbering.released, formers=formers,
                        unselected=unselected)
    clashes = _code_clashes(entries, resolver, profile)
    drafts = _plan_entries(entries, resolver, profile, merge_findings, clashes)
    planned = drafts.planned
    renumbering.formerly, renumbering.taken = resolver.former_hits, resolver.former_taken
    if renumbering.renamed_from or renumbering.findings or renumbering.formerly or renumbering.taken:
        renumbered(planned, drafts.linked, drafts.linked_at, entries, renumbering)
    if drafts.linked:
        _settle_dependants(drafts, entries, resolver, profile)
    made = Plan(
        environment=header.environment,
        api_version=header.api_version,
        base_url=header.base_url,
        fingerprints=dict(header.fingerprints),
        blocks=_block_plans(blocks, resolver, planned, owner, drafts.matched),
        findings=(*header.findings, *_repeated_block_names(blocks)),
        created_at=header.created_at,
        env_name=header.env_name,
        profile_fingerprint=header.profile_fingerprint,
    )
    if history is None:
        return made
    if not history.started:  # nothing recorded yet: two-way, and a baseline is the answer
        return without_history(made, live, history.own_users(service_user_ids))
    indexed = indexes(history, live, {b.entity for b in blocks})
    refuse_wrong_history(history, indexed, service_user_ids)
    return with_history(made, blocks, indexed, history, profile, service_user_ids, merged=merged,
                        sheet_wins=sheet_wins)


def _code_clashes(entries: Sequence[Entry], resolver: Resolver, profile: Profile) -> dict[str, list[str]]:
    """entry ref -> messages for the values of a unique group (a code) that another record claims."""
    clashes: dict[str, list[str]] = {}
    for group in profile.unique_groups.values():
        for ref, messages in unique_clashes(entries, resolver, group, _describe).items():
            clashes.setdefault(ref, []).extend(messages)
    return clashes


def _block_plans(
    blocks: Sequence[BlockInput], resolver: Resolver, planned: Sequence[RecordPlan], owner: Sequence[Sequence[int]],
    matched: set[str],
) -> tuple[BlockPlan, ...]:
    """Each block's plan: its records (by their places in `planned`), rows left out, live records not
    in source (none of an entity blocks not selected load: those may be theirs)."""
    first_block_of: dict[str, str] = {}
    for b in blocks:
        if b.entity not in resolver.unselected:
            first_block_of.setdefault(b.entity, b.block)
    blocked_rows = [_blocked_rows(b, resolver, matched) for b in blocks]
    held = {row.live_id for rows in blocked_rows for row in rows if row.live_id}
    block_plans = []
    for index, b in enumerate(blocks):
        absent: tuple[NotInSource, ...] = ()
        if first_block_of.get(b.entity) == b.block:
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
                mapping_file=getattr(b, "mapping_file", None),
            )
        )
    return tuple(block_plans)


def _settle_dependants(drafts: _Drafts, entries: Sequence[Entry], resolver: Resolver, profile: Profile) -> None:
    """The records that depend on another or have findings settled in `drafts.planned`: reference
    cycles refused, the dependants of records with errors blocked (both keep the records' order)."""
    settled = block_dependents(refuse_cycles(drafts.linked, _reference_cells(entries, drafts.linked_at,
                                                                              resolver, profile)))
    for ref, plan in settled.items():
        for at in drafts.linked_at[ref]:
            drafts.planned[at] = plan


def _blocked_rows(b: BlockInput, resolver: Resolver, matched: set[str]) -> tuple[BlockedRow, ...]:
    """The block's rows left out by errors, each with the live record its key names (if any, and unmatched)."""
    left_out = getattr(b, "left_out", ())
    if not left_out:  # the usual block: no live index to build
        return ()
    rows = []
    index = resolver.live_index(b.entity, tuple(b.key_fields)) if b.key_fields else {}
    for left in left_out:
        live_id = None
        if left.key is not None and not any(isinstance(p, Ref) for p in left.key):
            live = index.get(index_key(tuple(key_text(p) for p in left.key)))
            if live is not None and live.get("id") and str(live["id"]) not in matched:
                live_id = str(live["id"])
        key = None if left.key is None else tuple(key_json(p) for p in left.key)
        rows.append(BlockedRow(left.row, left.row.row, key, live_id, tuple(left.errors)))
    return tuple(rows)


def _reference_cells(entries: Sequence[Entry], at: Mapping[str, Sequence[int]], resolver: Resolver,
                     profile: Profile) -> Callable[[str], Mapping[str, CellRef]]:
    """`refuse_cycles`' `cells_of`: the cells of a record's references to records this plan creates
    (`at`: where each record asked of is among the entries), worked out again when asked."""
    def cells_of(ref: str) -> Mapping[str, CellRef]:
        entry = entries[at[ref][0]]
        live = resolver.live_index(entry.record.entity, entry.key_fields).get(index_key(entry.exact_key)) \
            if entry.exact_key is not None else resolver.match(entry)
        return reference_cells(entry.record, live, resolver, FieldRules(profile.entity(entry.record.entity)))
    return cells_of


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


class _Drafts(NamedTuple):
    """The records planned, before cycles and errors are looked at."""

    planned: list[RecordPlan]  # in the order of the entries
    # The records that depend on another or have findings, by ref, and where they are in `planned`:
    # all that refuse_cycles and block_dependents need to see.
    linked: dict[str, RecordPlan]
    linked_at: dict[str, list[int]]  # several places only when two blocks share a name (an error of its own)
    matched: set[str]  # the live ids matched


def _plan_entries(
    entries: Sequence[Entry], resolver: Resolver, profile: Profile, merge_findings: Mapping[str, Sequence[Finding]],
    clashes: Mapping[str, Sequence[str]],
) -> _Drafts:
    """Each entry's plan, in order.

    A block's entries are together and of one entity and key: its field rules and live index are
    looked up once a run of them, and a key of texts matched here (as `Resolver.match` does, without
    its call and lookups). What the rest of the plan needs of each record is noted here too, while
    it is at hand.
    """
    drafts = _Drafts([], {}, {}, set())
    planned, linked, linked_at, matched = drafts.planned, drafts.linked, drafts.linked_at, drafts.matched
    rules: dict[str, FieldRules] = {}
    entity, key_fields, index, entity_rules = None, None, None, None
    for e in entries:
        if e.record.entity != entity or e.key_fields is not key_fields:
            entity, key_fields = e.record.entity, e.key_fields
            index = resolver.live_index(entity, key_fields)
            entity_rules = rules.get(entity)
            if entity_rules is None:
                entity_rules = rules[entity] = FieldRules(profile.entity(entity))
        assert index is not None and entity_rules is not None  # set by the first entry
        key = e.exact_key  # as the live index keys it (`index_key`, inline: this runs for every record)
        live = index.get(key[0] if len(key) == 1 else key) if key is not None else resolver.match(e)
        draft = plan_record(
            e, live, resolver, entity_rules,
            merge_findings.get(e.ref, ()) if merge_findings else (), clashes.get(e.ref, ()) if clashes else (),
        )
        if draft.depends_on or draft.findings:
            linked[draft.ref] = draft
            linked_at.setdefault(draft.ref, []).append(len(planned))
        planned.append(draft)
        if draft.live_id is not None:
            matched.add(draft.live_id)
    return drafts
