"""The three-way plan: a two-way plan (`loader.plan.diff`) with the history's memory brought in.

Pure given the history (read only). Per block: records with a history line are matched by live id
first (a code corrected in the platform is a platform edit of the key, never a create of the old
code), then by key; each matched record's fields go through `loader.plan.history_fields`; records
this block loaded before that its sheet no longer names are "dropped from the source"; live records
no history line ties to a block are "not managed here" (lines of other blocks and files: neither);
a block none of whose records has a line gets a note of how many were last changed by someone
other than the loader. Kept edits, conflicts and dropped records an earlier apply showed are
marked `seen` (`loader.plan.shown`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from loader.findings import Finding
from loader.history.comparable import comparable
from loader.history.digests import RecordDigests
from loader.history.lines import HistoryLine, Owner
from loader.history.store import History
from loader.live_records import updated_time
from loader.plan.decisions_pass import SheetWins
from loader.plan.history_checks import is_adopted, live_user, one_row_per_live_record
from loader.plan.history_fields import compared_despite_errors, three_way_record
from loader.plan.history_index import EntityIndex
from loader.plan.merge import Merged, merged_entries
from loader.plan.model import Action, BlockPlan, DroppedRecord, FieldChange, Plan, RecordPlan
from loader.plan.record_work import RecordContext
from loader.plan.renumber_history import moved_keys, rekeyed
from loader.plan.resolve import key_text
from loader.plan.retire import emptied, released, released_findings, restored, retirements
from loader.plan.shown import dropped_seen, mark_seen
from loader.plan.three_way import Policy
from loader.profile import EntityProfile, Profile
from loader.record_fields import CUSTOM
from loader.source.equality import same
from loader.source.records import DesiredRecord


class _Given:
    """What the comparing reads of a block given (a `BlockInput`), without holding its records."""

    __slots__ = ("history_rules", "mapping_file", "source_file")

    def __init__(self, block: Any) -> None:
        self.history_rules = getattr(block, "history_rules", None)
        self.mapping_file: str | None = getattr(block, "mapping_file", None)
        self.source_file: str = block.source_file


class _Block(NamedTuple):
    context: RecordContext
    profile: EntityProfile


class HistoryCompare:
    """What comparing a record against `history` needs, per block of `blocks` (made once a plan)."""

    def __init__(self, history: History, blocks: Sequence[Any], profile: Profile,
                 service_user_ids: Sequence[str] = (), sheet_wins: SheetWins | None = None) -> None:
        self.history = history
        self.sheet_wins = sheet_wins  # the conflicts reviewers decided for the sheet: written over the platform edit
        self.own = history.own_users(service_user_ids)
        self.adopt_from = history.interrupted_applies
        self.state = history.state()  # what the plan names as compared against (lists the journals: once)
        self._inputs = {b.block: _Given(b) for b in blocks}  # what the blocks' records are compared by, not them
        self._profile = profile
        self._blocks: dict[tuple[str, str], _Block] = {}  # by block name and entity (a name shared by two
        # blocks makes a plan that is refused, but each record is still compared as its entity's)
        # per block name, the key tokens of the lines of the records its sheet names (those of records
        # without a line would never be looked for: `_dropped` looks for lines not named)
        self._named: dict[str, set[str]] = {}
        self.moved_away: frozenset[tuple[str, str]] = frozenset()  # (entity, key token) renumbered away

    def blocks_made(self) -> list[_Block]:
        """The contexts of the blocks compared so far."""
        return list(self._blocks.values())

    def gone(self, owner: Owner) -> bool:
        """Whether the mapping file of `owner` is no longer in the project (asked only for a field
        another block owns, so the error can name the `formerly` line a renamed file needs)."""
        given = {g.mapping_file for g in self._inputs.values()}
        return owner.file not in given and not Path(owner.file).exists()

    def former_names(self, owner: Owner, rules: Any) -> frozenset[Owner]:
        """Every name the block `owner` had before: its `formerly` (in `rules`), and the names the
        history's applies recorded for it and for them, back to the first (ownership follows the chain)."""
        formerly = {Owner(*rules.formerly)} if rules is not None and rules.formerly else set()
        return self.history.head.former_names(frozenset({owner, *formerly})) - {owner}

    def named(self, name: str) -> set[str]:
        """The key tokens of the lines of block `name`'s records compared so far (what `_dropped`
        leaves out)."""
        return self._named.setdefault(name, set())

    def given(self, name: str) -> _Given | None:
        """What the block `name` was given as, when an input names it."""
        return self._inputs.get(name)

    def block(self, name: str, entity: str, source_file: str) -> _Block:
        """The block `name`'s context (`source_file`: its file, when no input names it)."""
        found = self._blocks.get((name, entity))
        if found is None:
            given = self._inputs.get(name)
            rules = given.history_rules if given is not None else None
            mapping_file = (given.mapping_file if given is not None else None) or source_file
            context = RecordContext(
                Owner(mapping_file, name), self.former_names(Owner(mapping_file, name), rules),
                bool(rules is not None and rules.take_over),
                {field: Policy(value) for field, value in (rules.policies if rules is not None else ())},
                self.sheet_wins, self.gone)
            found = self._blocks[name, entity] = _Block(context, self._profile.entity(entity))
        return found


def with_history(plan: Plan, blocks: Sequence[Any], indexed: Mapping[str, EntityIndex], history: History,
                 profile: Profile, service_user_ids: Sequence[str] = (), *, merged: Merged | None = None,
                 sheet_wins: SheetWins | None = None) -> Plan:
    """`plan` (two-way, of `blocks` against the live records `indexed`) compared three-way against
    `history`. `merged`: the blocks' merged entries the plan was made of (made again when not given).
    `sheet_wins`: the conflicts reviewers decided for the sheet."""
    compare = HistoryCompare(history, blocks, profile, service_user_ids, sheet_wins)
    compare.moved_away = moved_keys(plan, history)
    merged = merged or merged_entries(blocks)
    inputs = {b.block: b for b in blocks}
    planned = one_row_per_live_record([_block(block, merged, at, indexed[block.entity], compare)
                                       for block, at in zip(plan.blocks, merged.owner, strict=True)])
    matched: dict[str, set[str]] = {}  # entity -> the live ids its records match (no tuple per record)
    for b in planned:
        ids = matched.setdefault(b.entity, set())
        ids.update(r.live_id for r in b.records if r.live_id)
    final = []
    for block in planned:
        index = indexed[block.entity]
        ids = matched[block.entity]
        absent = tuple(n for n in block.not_in_source_records if n.id not in ids and n.id not in index.line_of)
        dropped = _dropped(block, index, history, ids, compare.named(block.name),
                           compare.block(block.name, block.entity, block.source_file).context)
        retired, said = retirements(block, inputs.get(block.name), dropped, index, history,
                                    profile.entity(block.entity))
        said = (*emptied(block, inputs.get(block.name), dropped), *said)
        let_go = released(block, dropped, inputs.get(block.name))
        block = restored(block, inputs.get(block.name), index, history, profile.entity(block.entity))
        final.append(replace(block, not_in_source_records=absent, dropped=dropped, released=let_go,
                             records=(*block.records, *retired),
                             findings=(*block.findings, *said, *released_findings(block, let_go))))
    return replace(plan, blocks=tuple(final), history_state=compare.state)


def _block(block: BlockPlan, merged: Merged, positions: Sequence[int], entity: EntityIndex,
           compare: HistoryCompare) -> BlockPlan:
    """The block's records compared (`positions`: where each is in `merged`'s entries)."""
    found = compare.block(block.name, block.entity, block.source_file)
    records, with_line, others = [], 0, 0
    identity = compare.history.digester.identity  # the key token and the record's digests, its key made text once
    named = compare.named(block.name)
    for position, plan in zip(positions, block.records, strict=True):
        token, digests = identity(plan.entity, plan.renamed_from or plan.key)  # a renumber: the old key's line
        live = entity.by_id.get(plan.live_id) if plan.live_id else None
        line = entity.line(token)
        if line is not None and plan.renamed_from is None and (plan.entity, token) in compare.moved_away:
            line = None  # a key renumbered away in this plan, reused: its line is the renumbered record's
        by_line = entity.by_key.get(token) if line is not None else None
        rec = _three_way(plan, line, merged.first_record(position), live, by_line, digests, compare, found)
        if line is not None:
            named.add(token)
            with_line += 1
        elif rec.live_id is not None and live_user(entity.by_id.get(rec.live_id, {})) not in compare.own:
            others += 1
        records.append(rec)
    findings = block.findings
    if records and not with_line and others:
        findings = (*findings, _no_history(block.name, others))
    mapping_file = found.context.owner.file
    given = compare.given(block.name)
    rules = given.history_rules if given is not None else None
    formerly = (str(rules.formerly[0]), str(rules.formerly[1])) if rules is not None and rules.formerly else None
    return replace(block, records=tuple(records), findings=findings, mapping_file=mapping_file, formerly=formerly)


def _no_history(block: str, others: int) -> Finding:
    return Finding(
        "warning", "no-history",
        f"{others} of block {block}'s live records were last changed by someone other than the loader, "
        "and the history has no line for any of them: compared two-way (sheet against live); "
        "`loader history baseline` records the current state", None)


def without_history(plan: Plan, live: Mapping[str, Sequence[Mapping[str, Any]]], own: frozenset[str]) -> Plan:
    """`plan` made with a history not started yet (a project's first plan, or the first after `loader
    history reset`), with the note of each block whose matched live records someone other than the
    loader changed last (`own`: the loader's users configured): exactly where a baseline is the answer."""
    users: dict[str, dict[str, str | None]] = {}
    blocks = []
    for block in plan.blocks:
        matched = [r.live_id for r in block.records if r.live_id]
        if not matched:
            blocks.append(block)
            continue
        by_id = users.get(block.entity)
        if by_id is None:
            by_id = users[block.entity] = {str(rec.get("id")): live_user(rec) for rec in live.get(block.entity, ())}
        others = sum(1 for live_id in matched if by_id.get(live_id) not in own)
        blocks.append(replace(block, findings=(*block.findings, _no_history(block.name, others))) if others else block)
    return replace(plan, blocks=tuple(blocks))


def _three_way(plan: RecordPlan, line: HistoryLine | None, desired: DesiredRecord | None,
               live: Mapping[str, Any] | None, by_line: Mapping[str, Any] | None, digests: RecordDigests,
               compare: HistoryCompare, block: _Block) -> RecordPlan:
    """One record compared: `live` its match, `by_line` the live record with its line's id,
    `digests` the record's (`Digester.record`)."""
    if (plan.blocked or plan.errors) and not compared_despite_errors(plan):
        return plan
    profile, own, adopt_from = block.profile, compare.own, compare.adopt_from
    if by_line is not None and str(by_line.get("id")) != plan.live_id:
        if plan.errors:
            return plan
        plan, live = _as_update(plan, by_line, profile, desired), by_line
    if live is None:
        return plan  # a create
    if line is None and plan.action is Action.UNCHANGED \
            and not is_adopted(updated_time(live), live_user(live), own, adopt_from):
        return plan  # a record without history the sheet leaves as it is: two-way
    # A record an interrupted apply wrote without journaling it is compared three-way all the same:
    # the fields that apply wrote hold the sheet's values (live = sheet: W moves to live), and a
    # platform edit of another field it left alone stays one (kept, or a held conflict).
    rec = three_way_record(plan, live, desired, line, digests, profile, block.context)
    if plan.renamed_from is not None:  # W under the new key (loader.plan.renumber_history)
        rec = rekeyed(rec, line, live, digests, compare.history.digester.record(plan.entity, plan.key), profile)
    return mark_seen(rec, line)


def _as_update(plan: RecordPlan, live: Mapping[str, Any], profile: EntityProfile,
               desired: DesiredRecord | None) -> RecordPlan:
    """A record planned as a create, matched by id to `live` (its code changed in the platform)."""
    pii = desired.pii if desired is not None else frozenset()
    skip = profile.read_only | profile.create_only | profile.forbidden | profile.immutable
    payload: dict[str, Any] = {}
    changes = []
    for name, value in plan.payload.items():
        if name in skip:
            continue
        live_value = live.get(name)
        if name == CUSTOM:
            labels = dict(live_value or {})
            changed = {k: v for k, v in (value or {}).items() if not same(v, labels.get(k))}
            if changed:
                payload[name] = {**labels, **changed}
                changes += [FieldChange(f"{CUSTOM}.{k}", labels.get(k), v, f"{CUSTOM}.{k}" in pii or CUSTOM in pii)
                            for k, v in sorted(changed.items())]
            continue
        if same(comparable(name, value, profile), comparable(name, live_value, profile),
                as_set=name in profile.set_fields):
            continue
        payload[name] = value
        changes.append(FieldChange(name, live_value, value, name in pii))
    status = profile.status.field if profile.status is not None else None
    path = plan.status_path
    if path and status is not None:
        path = () if live.get(status) == path[-1] else (path[-1],)
    action = Action.UPDATE if payload or path else Action.UNCHANGED
    return replace(plan, action=action, payload=payload, changes=tuple(changes), status_path=path,
                            live_id=str(live.get("id")), live_updated_time=updated_time(live))


def _dropped(block: BlockPlan, entity: EntityIndex, history: History, matched: set[str], named: set[str],
             context: RecordContext) -> tuple[DroppedRecord, ...]:
    """Records this block loaded before (a line with a field it owns, under any name it had:
    `context`) that its sheet no longer names (`matched`: the live ids the plan's records of its
    entity match)."""
    owners = {context.owner, *context.formerly}
    digester = history.digester
    named = named | {digester.key_token(block.entity, b.key) for b in block.blocked_rows if b.key is not None}
    found = []
    for token in sorted(entity.line_keys - named):  # in key order, as the snapshot lists them
        line = entity.line(token)
        if line is None or not any(mark.owner in owners for mark in line.fields.values()):
            continue
        rec = entity.by_key.get(token)
        if rec is None or str(rec.get("id")) in matched:
            continue
        key = tuple(key_text(rec.get(f)) for f in block.key_fields)
        last = None if line.updated_time is None else _iso(line.updated_time)
        name = None if digester.is_personal(block.entity) else rec.get("name")
        found.append(DroppedRecord(key, str(rec.get("id")), last, seen=dropped_seen(line),
                                   name=name if isinstance(name, str) else None))
    return tuple(sorted(found, key=lambda d: (str(d.key), d.id)))


def _iso(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="seconds")

