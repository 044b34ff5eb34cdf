"""The plan's parts planned one at a time, each as soon as its collections are in, in a worker
thread while the event loop fetches the rest. Each part's plan is `plan_changes` of its blocks
(with a history, compared three-way there); once planned, the part's records and live collections
are let go of: nothing after reads them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

from loader.history.store import History
from loader.plan.decisions_pass import SheetWins
from loader.plan.diff import BlockInput, PlanHeader, plan_changes
from loader.plan.digest import block_digest
from loader.plan.duplicates import LivePeople, live_people
from loader.plan.incremental.collections import LiveCollections
from loader.plan.incremental.parts import PlanPart
from loader.plan.model import Plan
from loader.profile import Profile


class PartDiffing:
    """Plans the plan's parts one at a time, each as soon as its collections are in (see
    `loader.plan.incremental.parts`), and digests its blocks."""

    def __init__(self, blocks: Sequence[BlockInput], profile: Profile, header: PlanHeader,
                 history: History | None = None, service_user_ids: Sequence[str] = (),
                 sheet_wins: SheetWins | None = None, unselected: Mapping[str, Sequence[str]] | None = None):
        """`history`, `service_user_ids`, `sheet_wins`, `unselected`: as `plan_changes` takes them.
        `blocks` are held here until their part is planned (the caller may hold them too)."""
        self._blocks: list[BlockInput | None] = list(blocks)
        self._history = history
        self._service_user_ids = service_user_ids
        self._sheet_wins = sheet_wins
        self._unselected = unselected
        self._profile = profile
        self._header = header
        self._one_at_a_time = asyncio.Lock()
        self.seconds = 0.0
        self.digesting_s = 0.0
        self.digests: dict[int, str] = {}  # block index -> block_digest
        self.people: dict[str, LivePeople] = {}  # block with `duplicates:` -> its entity's live people

    async def part(self, part: PlanPart, collections: LiveCollections) -> Plan:
        live = await collections.of(part.entities)
        async with self._one_at_a_time:
            plan = await asyncio.to_thread(self._planned, part, live)
            del live
            collections.release(part.entities)  # planned: nothing after reads them
            await asyncio.to_thread(self._digested, part, plan)
        return plan

    def _planned(self, part: PlanPart, live: dict[str, list[dict[str, Any]]]) -> Plan:
        """In the worker thread: the part's plan; its blocks are let go of here."""
        started = time.perf_counter()
        blocks = [block for index in part.indexes if (block := self._blocks[index]) is not None]
        for index in part.indexes:
            self._blocks[index] = None
        for block in blocks:  # what matching people needs of the live records, before they are let go of
            rule = getattr(block, "duplicates", None)
            if rule is not None:
                self.people[block.block] = live_people(live.get(block.entity, ()), rule.match, block.key_fields)
        plan = plan_changes(blocks, live, self._profile, header=self._header, history=self._history,
                            service_user_ids=self._service_user_ids, sheet_wins=self._sheet_wins,
                            unselected=self._unselected)
        self.seconds += time.perf_counter() - started
        return plan

    def _digested(self, part: PlanPart, plan: Plan) -> None:
        """In the worker thread: the part's blocks' digests (see loader.plan.digest)."""
        started = time.perf_counter()
        history = self._history is not None and self._history.started
        for index, block in zip(part.indexes, plan.blocks, strict=True):
            self.digests[index] = block_digest(block, with_history=history)
        self.digesting_s += time.perf_counter() - started
