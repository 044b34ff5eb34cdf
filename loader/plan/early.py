"""Planning a part's records while its live collections are still arriving.

The largest collection comes in one round trip a page, to the last; the records of a part that wait
for it were all planned after its last page (4.2 s at 250,000 desired records). Many can be planned
before: a record whose match has come in, or whose own collection is whole, and whose references
reach only collections that are whole. `EarlyDrafter.draft` plans those (in the diff's worker thread,
as pages come in), and `plan_changes(..., early=drafter.drafts)` uses their plans at the end:

    drafter = EarlyDrafter(blocks, profile, part.refers)
    drafter.draft(whole={"program": [...], ...}, arrived={"subject": [records since the last call]})
    ...
    plan = plan_changes(blocks, live, profile, header=header, early=drafter.drafts)
    digests = [block_digest(block, known=drafter.texts) for block in plan.blocks]

Each early plan is the one `plan_changes` would make of its record (tests/plan/test_early.py):
- its match is the first live record with its key, as `Resolver.live_index` keeps the first of
  repeats in the order they came in. A record of a collection still arriving is planned only when
  its match comes in, and only with a key of plain values (a key holding a reference is matched at
  the end); a record of a whole collection is planned matched or not;
- its references are resolved over whole collections only: a record is planned only when every
  entity its entity's records can reach by references, one after another, is whole;
- the values its rows disagree on are known before any page. A code another record claims (a
  unique group) needs every member collection whole: such a record is planned again at the end;
- a draft that showed a live id by a label no whole collection has is not kept.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from loader.plan.diff import BlockInput, EarlyDrafts, draft_early, merged_entries
from loader.plan.digest import record_text
from loader.plan.fields import FieldRules
from loader.plan.model import RecordPlan
from loader.plan.resolve import LiveRecord, Resolver, UniqueClaims, live_key
from loader.profile import Profile


class EarlyDrafter:
    """Plans the records of one part (its blocks) that can be planned before its last live records."""

    def __init__(self, blocks: Sequence[BlockInput], profile: Profile, refers: Mapping[str, frozenset[str]]):
        merged = merged_entries(blocks)
        claims = [UniqueClaims(merged.entries, group) for group in profile.unique_groups.values()]
        self.drafts = EarlyDrafts(merged, claims=claims)
        self.texts: dict[int, tuple[RecordPlan, bytes]] = {}  # the drafts' texts, for block_digest's `known`
        self._profile = profile
        self._needs = {entity: _reach(entity, refers) for entity in refers}
        self._positions: dict[str, list[int]] = {}  # entity -> its entries' positions
        self._by_key: dict[str, dict[tuple[str, ...], dict[tuple[Any, ...], int]]] = {}  # entity, key fields, key
        for position, entry in enumerate(self.drafts.merged.entries):
            entity = entry.record.entity
            self._positions.setdefault(entity, []).append(position)
            if entry.exact_key is not None:
                keys = self._by_key.setdefault(entity, {}).setdefault(entry.key_fields, {})
                keys.setdefault(entry.exact_key, position)
        self._seen: dict[str, dict[tuple[str, ...], set[tuple[Any, ...]]]] = {}  # live keys come in so far
        self._waiting: dict[str, list[LiveRecord]] = {}  # come in, not yet looked at
        self._whole: frozenset[str] | None = None
        self._resolver: Resolver | None = None
        self._rules: dict[str, FieldRules] = {}
        self._finished: set[str] = set()  # entities whose every record is planned
        self._guessed: set[str] = set()  # entities whose records not matched yet are planned as creates

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
        for claims in self.drafts.claims or ():
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
                self._draft_all(entity, positions)
                self._finished.add(entity)
            elif entity not in needs:  # a record referring to its own entity's live records waits for them all
                self._draft_matched(entity)
                if entity in nearly_whole and entity not in self._guessed:
                    self._guessed.add(entity)
                    self._draft_creates(entity, positions)

    def finished(self) -> None:
        """Drop what drafting needed (indexes, live keys come in, its resolver): the plan at the end needs
        only `drafts` and `texts` (at 250,000 records the rest held tens of megabytes at the plan's peak)."""
        self._by_key.clear()
        self._seen.clear()
        self._waiting.clear()
        self._resolver = None

    def _draft_all(self, entity: str, positions: Sequence[int]) -> None:
        resolver, rules, plans = self._resolver, self._rules_of(entity), self.drafts.plans
        assert resolver is not None
        entries = self.drafts.merged.entries
        for position in positions:
            if position not in plans:
                entry = entries[position]
                if entry.exact_key is not None:
                    live = resolver.live_index(entity, entry.key_fields).get(entry.exact_key)
                else:
                    live = resolver.match(entry)
                self._noted(draft_early(self.drafts, position, live, resolver, rules))

    def _draft_matched(self, entity: str) -> None:
        """Plan the records whose match came in (the first live record with their key)."""
        waiting = self._waiting.pop(entity, [])
        if not waiting:
            return
        resolver, rules, plans = self._resolver, self._rules_of(entity), self.drafts.plans
        unsure = self.drafts.unsure
        assert resolver is not None
        seen = self._seen.setdefault(entity, {})
        for key_fields, positions in self._by_key.get(entity, {}).items():
            keys = seen.setdefault(key_fields, set())
            for record in waiting:
                key = live_key(record, key_fields)
                if key in keys:
                    continue  # a repeat: the first live record with the key is the match
                keys.add(key)
                position = positions.get(key)
                if position is not None and (position not in plans or position in unsure):
                    if position in unsure:  # planned as a create: its match came in after all
                        unsure.discard(position)
                        self.texts.pop(id(plans.pop(position)), None)
                    self._noted(draft_early(self.drafts, position, record, resolver, rules))

    def _draft_creates(self, entity: str, positions: Sequence[int]) -> None:
        """Plan the records with a key of plain values not matched yet as creates, unsure."""
        resolver, rules, plans = self._resolver, self._rules_of(entity), self.drafts.plans
        assert resolver is not None
        entries = self.drafts.merged.entries
        for position in positions:
            if position not in plans and entries[position].exact_key is not None:
                plan = draft_early(self.drafts, position, None, resolver, rules)
                if plan is not None:
                    self.drafts.unsure.add(position)
                    self._noted(plan)

    def _noted(self, plan: RecordPlan | None) -> None:
        if plan is not None:  # its text for the block's digest, while the pages still come in
            self.texts[id(plan)] = (plan, record_text(plan))

    def _rules_of(self, entity: str) -> FieldRules:
        rules = self._rules.get(entity)
        if rules is None:
            rules = self._rules[entity] = FieldRules(self._profile.entity(entity))
        return rules


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
