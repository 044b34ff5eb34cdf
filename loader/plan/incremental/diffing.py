"""The plan's parts diffed one at a time, each as soon as its collections are in, its records drafted
while their pages come in, in a worker thread that gives way to the event loop fetching the rest.
With a history, each part is compared three-way once diffed (`loader.plan.history_pass`), its
records drafted early compared as they were drafted, so that little is left after the last page.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any, cast

from loader.event_loop import GiveWay
from loader.plan.diff import BlockInput, PlanHeader, plan_changes
from loader.plan.digest import block_digest
from loader.plan.history_checks import refuse_wrong_history
from loader.plan.history_index import indexes
from loader.plan.history_pass import HistoryCompare, with_history
from loader.plan.incremental.collections import LiveCollections
from loader.plan.incremental.early import EarlyDrafter
from loader.plan.incremental.parts import PlanPart
from loader.plan.merge import merged_entries
from loader.plan.model import Plan
from loader.profile import Profile


class PartDiffing:
    """Diffs the plan's parts one at a time, each as soon as its collections are in, in a worker thread
    so the event loop keeps fetching the rest meanwhile (see loader.plan.incremental.parts)."""

    def __init__(self, blocks: Sequence[BlockInput], profile: Profile, header: PlanHeader, give_way: GiveWay,
                 history: HistoryCompare | None = None, service_user_ids: Sequence[str] = (), *,
                 keep_live: bool = True, keep_records: bool = True):
        """`history`: compare each part against it (refused first when it is of another database or
        behind the service, `service_user_ids` the environment's own users); the block digests are
        then section 10's. `keep_live=False`: each part's live records are let go once it is planned
        (nothing after reads them). `keep_records=False`: so are its blocks' desired records (the
        blocks, `BlockRecords`, are then held here only) and the history's lines of its entities
        (`History.let_go_of`)."""
        self._keep_live = keep_live
        self._keep_records = keep_records
        self._blocks = list(blocks)
        self._history = history
        self._service_user_ids = service_user_ids
        self._profile = profile
        self._header = header
        self._give_way = give_way
        self._one_at_a_time = asyncio.Lock()
        self.seconds = 0.0
        self.digesting_s = 0.0
        self.digests: dict[int, str] = {}  # block index -> block_digest
        self.early_records = 0

    async def part(self, part: PlanPart, collections: LiveCollections) -> Plan:
        drafter = await self._drafting(part, collections)
        live = await collections.of(part.entities)
        async with self._one_at_a_time:
            plan, known = await asyncio.to_thread(self._diffed, part, live, drafter)
            del drafter, live  # what drafting kept: the hashes it made are in `known`
            self._let_go(part, collections)  # before the digests: nothing of it is read again
            await asyncio.to_thread(self._digested, part, plan, known)
        return plan

    async def _drafting(self, part: PlanPart, collections: LiveCollections) -> EarlyDrafter | None:
        """Records planned while the part's last pages come in (loader.plan.incremental.early), each
        time some came: the drafter once its collections are in (None: they were in at once)."""
        if collections.done(part.entities):
            return None
        changed = collections.watch()
        async with self._one_at_a_time:
            history = self._history
            compare = history.early if history is not None else None
            let_go = not self._keep_records
            drafter = await asyncio.to_thread(partial(EarlyDrafter, let_go=let_go, referred_by=part.referred_by,
                                                      let_go_live=not self._keep_live,
                                                      named_more_than_once=history.named_more_than_once
                                                      if history is not None else None),
                                              part.blocks_of(self._blocks),
                                              self._profile, part.refers, self._give_way, compare)
            if let_go:  # merged, the drafter holds them: each let go of once nothing reads it again
                self._records_let_go(part)
        since: dict[str, int] = {}
        while not collections.done(part.entities):
            changed.clear()
            whole, arrived = collections.whole(part.entities), collections.arrived(part.entities, since)
            nearly = collections.nearly_whole(part.entities)
            async with self._one_at_a_time:
                await asyncio.to_thread(self._drafted, drafter, whole, arrived, nearly)
            if not collections.done(part.entities):
                await changed.wait()
        return drafter

    def _let_go(self, part: PlanPart, collections: LiveCollections) -> None:
        """What the part's plan was made of, let go of as asked (`keep_live`, `keep_records`)."""
        if not self._keep_live:
            collections.release(part.entities)
        if not self._keep_records:
            self._records_let_go(part)
            if self._history is not None:
                self._history.history.let_go_of(part.entities)  # compared: its lines are read no more

    def _records_let_go(self, part: PlanPart) -> list[BlockInput]:
        """The part's blocks without their records, from now on."""
        for index in part.indexes:
            self._blocks[index] = _without_records(self._blocks[index])
        return part.blocks_of(self._blocks)

    def _drafted(
        self,
        drafter: EarlyDrafter,
        whole: dict[str, list[dict[str, Any]]],
        arrived: dict[str, list[dict[str, Any]]],
        nearly: set[str],
    ) -> None:
        started = time.perf_counter()
        drafter.draft(whole, arrived, nearly)
        self.seconds += time.perf_counter() - started

    def _diffed(self, part: PlanPart, live: dict[str, list[dict[str, Any]]],
                drafter: EarlyDrafter | None) -> tuple[Plan, list[list[bytes | None]] | None]:
        """In the worker thread: the part's plan, and the hashes of its blocks' records made while
        drafting (`block_digest`'s `known`, per block)."""
        started = time.perf_counter()
        early = drafter.settled(live) if drafter is not None else None
        self.early_records += early.count() if early is not None else 0
        blocks = part.blocks_of(self._blocks)
        merged = early.merged if early is not None else merged_entries(blocks)
        plan = plan_changes(blocks, live, self._profile, header=self._header, early=early, merged=merged,
                            give_way=self._give_way)
        if self._history is not None:
            if not self._keep_records and drafter is not None:
                # the compare reads the desired records of those not compared as drafted, and no other
                merged = drafter.records_let_go(plan, merged)
                blocks = self._records_let_go(part)
            indexed = indexes(self._history.history, live, {b.entity for b in blocks})
            refuse_wrong_history(self._history.history, indexed, self._service_user_ids)
            plan = with_history(plan, blocks, indexed, self._history.history, self._profile, self._service_user_ids,
                                merged=merged, early=drafter, compare=self._history)
        known = None if drafter is None else [drafter.block_hashes(at, block) for at, block in enumerate(plan.blocks)]
        self.seconds += time.perf_counter() - started
        return plan, known

    def _digested(self, part: PlanPart, plan: Plan, known: list[list[bytes | None]] | None) -> None:
        """In the worker thread: the part's blocks' digests (see loader.plan.digest)."""
        started = time.perf_counter()
        history = self._history is not None
        for at, (index, block) in enumerate(zip(part.indexes, plan.blocks, strict=True)):
            self.digests[index] = block_digest(block, known[at] if known is not None else None, self._give_way,
                                               with_history=history)
        self.digesting_s += time.perf_counter() - started


def _without_records(block: BlockInput) -> BlockInput:
    """The block without its records (a dataclass, as `BlockRecords` is: `keep_records=False` needs one)."""
    made: BlockInput = replace(cast(Any, block), records=())
    return made
