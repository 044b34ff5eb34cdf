"""Planning a part's records while its live collections are still arriving.

The largest collection comes in one round trip a page, to the last; the records of a part that wait
for it were all planned after its last page (4.2 s at 250,000 desired records). Many can be planned
before: a record whose match has come in, or whose own collection is whole, and whose references
reach only collections that are whole. `EarlyDrafter.draft` plans those (in the diff's worker thread,
as pages come in), and `plan_changes(..., early=drafter.settled(live))` uses their plans at the end:

    drafter = EarlyDrafter(blocks, profile, part.refers)
    drafter.draft(whole={"program": [...], ...}, arrived={"subject": [records since the last call]})
    ...
    drafter.draft(whole={...}, arrived={...}, nearly_whole={"subject"})   # few subjects still to come
    plan = plan_changes(blocks, live, profile, header=header, early=drafter.settled(live))
    digests = [block_digest(block, drafter.block_hashes(i, block)) for i, block in enumerate(plan.blocks)]

Each early plan is the one `plan_changes` would make of its record (tests/plan/incremental/test_early.py):
- its match is the first live record with its key, as `Resolver.live_index` keeps the first of
  repeats in the order they came in. A record of a collection still arriving is planned only when
  its match comes in, and only with a key of plain values (a key holding a reference is matched at
  the end); a record of a whole collection is planned matched or not;
- its references are resolved over whole collections only: a record is planned only when every
  entity its entity's records can reach by references, one after another, is whole;
- the values its rows disagree on are known before any page. A code another record claims (a
  unique group) needs every member collection whole: such a record is planned again at the end;
- a draft that showed a live id by a label no whole collection has is not kept;
- a part with two records of one ref (two blocks of one name) is planned at the end: the resolver
  remembers a key's match by ref, so one record's match can be the other's, as the order decides;
- when few of a collection's records are still to come (`nearly_whole`), its records not matched yet
  and not near a live key come in are planned as creates. A live record that comes in after with
  the key, exactly or but for case and spaces, undoes that: the record is planned as its match, or
  at the end with the near-duplicate warning (`settled` looks at the records come in last).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from loader.event_loop import GiveWay, never_give_way
from loader.places import CellRef
from loader.plan.diff import BlockInput
from loader.plan.digest import record_hash
from loader.plan.fields import FieldRules
from loader.plan.marks import Marks, mark_of
from loader.plan.merge import Merged, RecordsByPosition, merged_entries
from loader.plan.model import BlockPlan, Plan, RecordPlan
from loader.plan.record import plan_record
from loader.plan.resolve import Entry, LiveRecord, Resolver, UniqueClaims, fold_key, index_key, live_key
from loader.profile import Profile
from loader.source.makers import desired_record
from loader.source.records import DesiredRecord

# A draft compared three-way as it is made (`loader.plan.history_pass.HistoryCompare.early`), given its
# match and its first row's record: whether the history has a line for it, and its three-way plan;
# None when comparing it needs other live records (it is compared at the end).
Compare = Callable[[RecordPlan, LiveRecord | None, DesiredRecord], tuple[bool, RecordPlan] | None]

# What the drafter knows of each position's draft, with a history (a byte each).
_NOT_COMPARED, _NO_LINE, _LINE = 0, 1, 2


@dataclass
class EarlyDrafts:
    """Record plans made before the plan's last live records came in, each one the plan
    `plan_changes` makes of its entry: by entry position in `merged.entries` (None: not drafted;
    a list, not a dict: an int and a slot a record less). `plan_changes` takes the claims (it lets
    go of them once used)."""

    merged: Merged
    # The claims on each unique group's values (profile.unique_groups, in order), live records added
    # as they came in.
    claims: list[UniqueClaims]
    plans: list[RecordPlan | None]

    def drafted(self) -> list[int]:
        """The positions drafted, in order."""
        return [position for position, plan in enumerate(self.plans) if plan is not None]

    def count(self) -> int:
        """How many are drafted."""
        return len(self.plans) - self.plans.count(None)


class EarlyDrafter:
    """Plans the records of one part (its blocks) that can be planned before its last live records."""

    def __init__(
        self,
        blocks: Sequence[BlockInput],
        profile: Profile,
        refers: Mapping[str, frozenset[str]],
        give_way: GiveWay = never_give_way,
        compare: Compare | None = None,
        *,
        let_go: bool = False,
        referred_by: Mapping[str, frozenset[str]] | None = None,
        let_go_live: bool = False,
        named_more_than_once: Callable[[str, str], bool] | None = None,
    ):
        """`give_way` is called after each record is planned (`loader.event_loop`: drafting runs in a
        worker thread beside the event loop that brings the pages). `compare`: with a history, each
        draft is compared three-way as it is made (`loader.plan.history_pass.HistoryCompare.early`),
        and the compared record is hashed in place of the draft. `let_go`: the desired records are
        held here alone (the blocks were let go of), and those nothing reads again are let go of as
        they are drafted (`_let_go_of`). `referred_by`: the fields the part's references look each
        entity's records up by (`PlanPart.referred_by`); a record of an entity referred to is let go of
        but for those (None: not let go of). `let_go_live`, with `let_go`: the live records are read by
        this part alone, and not once it is planned (`PartDiffing(keep_live=False)`): the match of a
        record let go of keeps only what the part's end reads of it (`_live_let_go_of`). With `compare`,
        only a match its record's history line names, and no other line may name
        (`named_more_than_once`, `HistoryCompare.named_more_than_once`; None: no match is let go of):
        the record whose line names a live record it does not match is compared against it whole."""
        merged = merged_entries(blocks)
        claims = [UniqueClaims(merged.entries, group) for group in profile.unique_groups.values()]
        self.drafts = EarlyDrafts(merged, claims, [None] * len(merged.entries))
        # By position: the record_hash of each draft (with `compare`, of its three-way plan), for block_digest
        self._hashes: list[bytes | None] = [None] * len(merged.entries)
        # With `compare`, by position: whether the draft was compared (_NO_LINE, _LINE), and the three-way
        # plans kept beside their drafts (most replace the draft: see `_noted`)
        self._lines = bytearray(len(merged.entries) if compare is not None else 0)
        self._aside: dict[int, RecordPlan] = {}
        self._compare = compare
        self._named_more_than_once = named_more_than_once
        self._profile = profile
        self._give_way = give_way
        self._needs = {entity: _reach(entity, refers) for entity in refers}
        self._let_go = let_go
        self._referred = frozenset().union(*refers.values())  # the entities some record of the part refers to
        self._looked_up_by = referred_by
        self._let_go_entries: dict[str, Entry] = {}  # entity -> the entry in the place of each let go of
        if len({entry.ref for entry in merged.entries}) < len(merged.entries):
            # Two records share a ref (two blocks share a name: the plan is refused for it): the
            # resolver remembers matches by ref, so a record's plan depends on which is matched first.
            self._needs = {}
        self._positions: dict[str, list[range]] = {}  # entity -> its entries' positions (its blocks')
        for block, positions in zip(blocks, merged.owner, strict=True):
            self._positions.setdefault(block.entity, []).append(positions)
        self._by_key: dict[str, dict[tuple[str, ...], dict[tuple[Any, ...], int]]] = {}  # entity, key fields, key
        resolved_keys: set[str] = set()  # entities with a record whose key holds a reference
        for position, entry in enumerate(self.drafts.merged.entries):
            entity = entry.record.entity
            if entry.exact_key is not None:
                keys = self._by_key.setdefault(entity, {}).setdefault(entry.key_fields, {})
                keys.setdefault(entry.exact_key, position)
            else:
                resolved_keys.add(entity)
        # entity -> the fields of a live record the part's end reads once its desired record is let go of
        self._live_kept: dict[str, frozenset[str]] = {}
        if let_go and let_go_live:
            for entity, by_fields in self._by_key.items():
                if len(by_fields) == 1 and entity not in resolved_keys:  # else two records could match one
                    (key_fields,) = by_fields
                    self._live_kept[entity] = _read_at_the_end(entity, key_fields, profile, referred_by or {})
        # By position: whether the first live record with the record's key came in (its match: a live
        # record with the key after it is a repeat)
        self._matched = bytearray(len(merged.entries))
        self._waiting: dict[str, list[LiveRecord]] = {}  # come in, not yet looked at
        self._whole: frozenset[str] | None = None
        self._resolver: Resolver | None = None
        self._rules: dict[str, FieldRules] = {}
        self._finished: set[str] = set()  # entities whose every record is planned
        self._guessed: set[str] = set()  # entities whose records not matched yet are planned as creates
        self._looked_at: dict[str, int] = {}  # entity -> its live records come in and looked at
        # Live keys come in but for case and spaces (`near_duplicate`'s), per entity and key fields, by
        # `_folded_mark`, in `Marks` (`loader.plan.marks`): two bits, not the key, for each of hundreds
        # of thousands of live records.
        self._folded: dict[str, dict[tuple[str, ...], Marks]] = {}
        # Records planned as creates while their collection still arrived, by entity, key fields and
        # folded key's mark: a live record that comes in with that mark (their match, a near duplicate,
        # or rarely another key with the same mark) undoes the plan (planned again as its match, or at
        # the end, where each is planned as plan_changes plans it).
        self._unsure: dict[str, dict[tuple[str, ...], dict[int, int]]] = {}

    def draft(
        self,
        whole: Mapping[str, Sequence[LiveRecord]],
        arrived: Mapping[str, Sequence[LiveRecord]],
        nearly_whole: Collection[str] = (),
    ) -> None:
        """Plan what can be planned now. `whole`: every collection of the part that is in, whole;
        `arrived`: the records of the others that came in since the last call, in the order they came;
        `nearly_whole`: collections of which few records are still to come: their records not matched
        yet are planned as creates, unsure (a match that comes in after is planned again, here or at
        the end)."""
        if self._resolver is None or frozenset(whole) != self._whole:
            self._whole = frozenset(whole)
            self._resolver = Resolver(self.drafts.merged.entries, dict(whole))
        for entity in whole:
            self._waiting.pop(entity, None)  # its records are all in `whole`
        for claims in self.drafts.claims:
            for entity in claims.members:
                if entity in whole:
                    claims.catch_up(entity, whole[entity])
                elif entity in arrived:
                    claims.add(entity, arrived[entity])
        for entity, records in arrived.items():
            if entity in self._positions and entity not in whole:
                self._waiting.setdefault(entity, []).extend(records)
        for entity, positions in self._positions.items():
            needs = self._needs.get(entity)
            if entity in self._finished or needs is None or not needs <= self._whole:
                continue
            if entity in whole:
                self._draft_all(entity, chain.from_iterable(positions), whole[entity])
                self._finished.add(entity)
            elif entity not in needs:  # a record referring to its own entity's live records waits for them all
                self._draft_matched(entity)
                if entity in nearly_whole and entity not in self._guessed:
                    self._guessed.add(entity)
                    self._draft_creates(entity, chain.from_iterable(positions))

    def settled(self, live: Mapping[str, Sequence[LiveRecord]]) -> EarlyDrafts:
        """The drafts, for `plan_changes(..., early=...)` with these (whole) live collections: the
        creates planned before their collection was whole are kept only if no live record came in
        after with their key, exactly or nearly. What drafting needed (indexes, live keys come in, its
        resolver) is dropped: at 250,000 records it held tens of megabytes at the plan's peak."""
        for entity in list(self._unsure):
            self._settle(entity, live.get(entity, ()))
        self._by_key.clear()
        self._positions.clear()
        self._folded.clear()
        self._waiting.clear()
        self._resolver = None
        return self.drafts

    def _settle(self, entity: str, records: Sequence[LiveRecord]) -> None:
        """Undo the creates of `entity` planned unsure that a record of `records` (all of its live
        records) not looked at yet has the key of, exactly or nearly; keep the rest as planned."""
        unsure = self._unsure.pop(entity, {})
        for record in records[self._looked_at.get(entity, 0):]:
            for key_fields, by_fold in unsure.items():
                position = by_fold.pop(_folded_mark(live_key(record, key_fields)), None)
                if position is not None:
                    self._undo(position)
        self._looked_at[entity] = len(records)

    def _undo(self, position: int) -> None:
        self.drafts.plans[position] = None
        self._hashes[position] = None
        if self._lines:
            self._lines[position] = _NOT_COMPARED
            self._aside.pop(position, None)

    def compared_at(self, position: int, record: RecordPlan) -> tuple[bool, RecordPlan] | None:
        """With `compare`: whether the history has a line for the record at `position` and its
        three-way plan, when it was compared as drafted and `record` (the part's two-way plan's record
        there) is what drafting gave; None: compare it now (`loader.plan.history_pass.with_history`)."""
        state = self._lines[position] if self._lines else _NOT_COMPARED
        if state == _NOT_COMPARED or self.drafts.plans[position] is not record:
            return None
        return state == _LINE, self._aside.get(position, record)

    def records_let_go(self, plan: Plan, merged: Merged) -> Merged:
        """With `compare`, once `plan_changes` made `plan` of the drafts: the merged entries (`merged`,
        the drafts' own) let go of, and in their place what the three-way compare still reads of them,
        the first row's record of each entry not compared as drafted (`Merged.first_record`)."""
        needed: list[DesiredRecord | None] = [None] * len(merged.entries)
        for block, positions in zip(plan.blocks, merged.owner, strict=True):
            for position, record in zip(positions, block.records, strict=True):
                if self.compared_at(position, record) is None:
                    needed[position] = merged.first_record(position)
        merged.entries.clear()
        if isinstance(merged.firsts, dict):
            merged.firsts.clear()
        return Merged([], {}, merged.owner, RecordsByPosition(needed))

    def block_hashes(self, index: int, block: BlockPlan) -> list[bytes | None]:
        """`block_digest`'s `known` for the part's block `index` as finally planned: the hash of each
        of its records made while drafting, None where the record is not the one hashed then."""
        hashes, plans, aside = self._hashes, self.drafts.plans, self._aside
        known: list[bytes | None] = []
        for position, record in zip(self.drafts.merged.owner[index], block.records, strict=True):
            made = hashes[position]
            if made is not None and (aside.get(position) or plans[position]) is not record:
                made = None
            known.append(made)
        return known

    def _draft_all(self, entity: str, positions: Iterable[int], records: Sequence[LiveRecord]) -> None:
        """Plan the records of `entity`, whose live records are all in (`records`)."""
        if entity in self._unsure:
            self._settle(entity, records)
        resolver, rules, plans = self._resolver, self._rules_of(entity), self.drafts.plans
        assert resolver is not None
        entries = self.drafts.merged.entries
        for position in positions:
            if plans[position] is None:
                entry = entries[position]
                if entry.exact_key is not None:
                    live = resolver.live_index(entity, entry.key_fields).get(index_key(entry.exact_key))
                else:
                    live = resolver.match(entry)
                self._noted(position, draft_early(self.drafts, position, live, resolver, rules), live)

    def _draft_matched(self, entity: str) -> None:
        """Plan the records whose match came in (the first live record with their key)."""
        waiting = self._waiting.pop(entity, [])
        if not waiting:
            return
        resolver, rules, plans = self._resolver, self._rules_of(entity), self.drafts.plans
        assert resolver is not None
        matched = self._matched
        folded = self._folded.setdefault(entity, {})
        unsure = self._unsure.get(entity, {})
        for key_fields, positions in self._by_key.get(entity, {}).items():
            folds = folded.get(key_fields)
            if folds is None:
                folds = folded[key_fields] = Marks(len(positions))
            by_fold = unsure.get(key_fields)
            for record in waiting:
                key = live_key(record, key_fields)
                position = positions.get(key)
                if position is not None:
                    if matched[position]:
                        continue  # a repeat: the first live record with the key is the match
                    matched[position] = 1
                fold = _folded_mark(key)
                folds.add(fold)
                if by_fold:
                    guessed = by_fold.pop(fold, None)
                    if guessed is not None:  # planned as a create: its match, or a near duplicate, came in
                        self._undo(guessed)
                if position is not None and plans[position] is None:
                    self._noted(position, draft_early(self.drafts, position, record, resolver, rules), record)
        self._looked_at[entity] = self._looked_at.get(entity, 0) + len(waiting)

    def _draft_creates(self, entity: str, positions: Iterable[int]) -> None:
        """Plan as creates, unsure, the records with a key of plain values not matched yet and not
        near a live key come in (those are planned at the end, with the warning)."""
        resolver, rules, plans = self._resolver, self._rules_of(entity), self.drafts.plans
        assert resolver is not None
        entries = self.drafts.merged.entries
        folded = self._folded.get(entity, {})
        unsure = self._unsure.setdefault(entity, {})
        for position in positions:
            entry = entries[position]
            if plans[position] is not None or entry.exact_key is None:
                continue
            fold = _folded_mark(entry.exact_key)
            by_fold = unsure.setdefault(entry.key_fields, {})
            marks = folded.get(entry.key_fields)
            if (marks is not None and fold in marks) or fold in by_fold:
                continue
            plan = draft_early(self.drafts, position, None, resolver, rules)
            if plan is not None:
                by_fold[fold] = position
                self._noted(position, plan, None)

    def _noted(self, position: int, plan: RecordPlan | None, live: LiveRecord | None) -> None:
        """The draft at `position` hashed for the block's digest while the pages come in; with `compare`,
        compared three-way first, and that hashed. The three-way plan takes the draft's place when the
        end of `plan_changes` cannot tell them apart (no dependency, no error, the same match): it
        keeps it as it is. Otherwise the draft stays, its three-way plan beside it (an error the
        compare found, or a dependency, would block records at the end that the draft did not)."""
        if plan is not None:
            final = plan
            compare = self._compare
            if compare is not None:
                compared = compare(plan, live, self.drafts.merged.first_record(position))
                if compared is None:  # compared at the end
                    self._give_way()
                    return
                has_line, final = compared
                self._lines[position] = _LINE if has_line else _NO_LINE
                if final is not plan:
                    if plan.depends_on or final.depends_on or final.live_id != plan.live_id or _has_error(final):
                        self._aside[position] = final
                    else:
                        self.drafts.plans[position] = final
            self._hashes[position] = record_hash(final)
            if self._let_go and live is not None and position not in self._aside:
                self._let_go_of(position, final, live)
        self._give_way()

    def _let_go_of(self, position: int, final: RecordPlan, live: LiveRecord) -> None:
        """The desired record at `position`, drafted against its match (never undone), as its
        plan is final (`final`: no dependency, no error), let go of where nothing reads it again: its
        value of each unique group claimed by it alone for good, no row merged into it. The entry of a
        record of an entity the part refers to keeps its ref, key, row and the fields the references look
        it up by (`Resolver.resolve` finds it by them; its match, by its key); any other's is one entry
        of its entity (`_let_go_entry`): its plan says the rest. With `let_go_live`, its match (`live`)
        is let go of too, where nothing reads it whole again (`_live_read_no_more`, `_live_let_go_of`)."""
        entries = self.drafts.merged.entries
        entry = entries[position]
        record = entry.record
        if final.depends_on or _has_error(final) or record.also_rows:
            return
        kept = _NO_FIELDS
        referred = record.entity in self._referred
        if referred:
            looked_up = self._looked_up_by.get(record.entity) if self._looked_up_by is not None else None
            if looked_up is None:
                return
            kept = {name: record.fields[name] for name in looked_up if name in record.fields} or _NO_FIELDS
        whole = self._whole or frozenset()
        claims = self.drafts.claims
        if any(group.can_clash(entry, whole) for group in claims):
            return
        if referred:
            slim = entry._replace(record=desired_record(record.block, record.entity, record.key, kept, record.row,
                                                         _NO_FIELDS, record.pii))
        else:
            slim = self._let_go_entry(record.entity)
        for group in claims:
            group.replace(entry, slim)
        entries[position] = slim
        kept_fields = self._live_kept.get(record.entity)
        if kept_fields is not None and self._live_read_no_more(position, record.entity, live):
            _live_let_go_of(live, kept_fields)

    def _live_read_no_more(self, position: int, entity: str, live: LiveRecord) -> bool:
        """Whether the part's end reads no more than `_read_at_the_end` of `live`, the match of the record
        of `entity` at `position`: not when it is a live claim that can clash (a clash message describes
        it); with a history, only when the record's line names it and no other line may (another line's
        record would be compared against it whole)."""
        if any(group.holds(live) for group in self.drafts.claims):
            return False
        if self._compare is None:
            return True
        if self._lines[position] != _LINE or self._named_more_than_once is None:
            return False
        return not self._named_more_than_once(entity, str(live.get("id")))

    def _let_go_entry(self, entity: str) -> Entry:
        """The entry in the place of each record of `entity` let go of, when no record of the part refers
        to the entity: read for its entity alone (`UniqueClaims.add`, of a value it claimed), one for all."""
        entry = self._let_go_entries.get(entity)
        if entry is None:
            record = desired_record("", entity, (), _NO_FIELDS, _NOWHERE, _NO_FIELDS, frozenset())
            entry = self._let_go_entries[entity] = Entry("", record, ())
        return entry

    def _rules_of(self, entity: str) -> FieldRules:
        rules = self._rules.get(entity)
        if rules is None:
            rules = self._rules[entity] = FieldRules(self._profile.entity(entity))
        return rules


def draft_early(
    early: EarlyDrafts, position: int, live: LiveRecord | None, resolver: Resolver, rules: FieldRules
) -> RecordPlan | None:
    """The plan of entry `position` against `live`, its match, noted in `early`: the plan `plan_changes`
    will make of it, when `resolver` has whole every collection the entry's references can reach. A
    draft that showed a live id no record of `resolver` has (one of a collection still arriving) is
    not noted: it is planned at the end (None)."""
    entry = early.merged.entries[position]
    misses = resolver.label_misses
    plan = plan_record(entry, live, resolver, rules, early.merged.findings.get(entry.ref, ()), ())
    if resolver.label_misses != misses:
        return None
    early.plans[position] = plan
    return plan


# The fields and cells of a record let go of (`EarlyDrafter._let_go_of`); never changed
_NO_FIELDS: Mapping[str, Any] = {}
_NOWHERE = CellRef("")


def _read_at_the_end(entity: str, key_fields: tuple[str, ...], profile: Profile,
                     referred_by: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """What the part's end reads of a live record matched by a record let go of, whose plan is made:
    its id; its key, to match it (`Resolver.live_index`, the near-duplicate warning, `NotInSource`,
    dropped records); the fields references look it up by; its unique groups' values (the claims);
    its label (`Resolver.live_label`: code, external id, else name); its metadata (the history's
    checks read who last updated it, and when: `loader.plan.history_checks`)."""
    groups = {field for field, members in profile.unique_groups.values() if entity in members}
    return frozenset({"id", "metadata", "code", "external_id", *key_fields, *referred_by.get(entity, ()), *groups})


def _live_let_go_of(live: LiveRecord, kept: frozenset[str]) -> None:
    """The live record, in place (every index holding it holds it still), but for the fields `kept`
    and, when it has neither code nor external id, its name (its label)."""
    if not isinstance(live, dict):
        return
    if not live.get("code") and not live.get("external_id"):
        kept = kept | {"name"}
    held = [(name, value) for name, value in live.items() if name in kept]
    if len(held) < len(live):
        live.clear()  # its table freed: one made for the fields held is smaller
        live.update(held)


def _folded_mark(key: Sequence[Any]) -> int:
    """A key but for case and spaces (`fold_key`) as a mark (`mark_of`): two keys rarely share one,
    which only leaves a record to be planned at the end."""
    return mark_of(fold_key(key))


def _has_error(plan: RecordPlan) -> bool:
    return bool(plan.findings) and any(f.severity == "error" for f in plan.findings)


def _reach(entity: str, refers: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The entities `entity`'s records can reach by references, one after another."""
    reached: set[str] = set()
    todo = list(refers.get(entity, ()))
    while todo:
        target = todo.pop()
        if target not in reached:
            reached.add(target)
            todo += refers.get(target, ())
    return frozenset(reached)
