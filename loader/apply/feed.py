"""Records that arrive while the apply runs: a saved plan's records read during its apply.

`RecordFeed` gives them a batch at a time in plan order, each record after those it depends on or
refers to. `Feed` pumps it into the executor beside the writes: each batch handed over as it comes,
and the dispatch loop woken to send what became ready. A feed that fails (a batch that is not a
valid plan's) stops the apply; its error is raised once the writes in flight have ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from loader.plan.model import RecordPlan

RecordFeed = AsyncIterator[Sequence[RecordPlan]]


class Feed:
    """`more` pumped into `arrived` by a task of the running loop (`start`)."""

    def __init__(self, more: RecordFeed, arrived: Callable[[Sequence[RecordPlan]], None]) -> None:
        self.more = more
        self.arrived = arrived
        self.task: asyncio.Task[None] | None = None
        self.done = False  # every batch has arrived, or the feed failed
        self.error: BaseException | None = None

    def start(self, wake: Callable[[Any], object], failed: Callable[[], object]) -> None:
        """Pump the batches; `wake(task)` after each and at the end; `failed()` when the feed fails."""

        async def pump() -> None:
            try:
                async for batch in self.more:
                    self.arrived(batch)
                    wake(self.task)
            except Exception as error:
                self.error = error
                failed()
            finally:
                self.done = True
                wake(self.task)

        self.task = asyncio.create_task(pump())

    async def finish(self, *, cancel: bool) -> None:
        """Wait for the feed's last batch (records still to come arrive, e.g. to be reported as not
        sent after an interruption), or cancel it (`cancel`); then raise its error, if any."""
        if self.task is not None and not self.task.done():
            if cancel:
                self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        if self.error is not None:
            raise self.error
