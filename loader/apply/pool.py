"""The executor's workers: `concurrency` tasks, each writing one ready record after another.

A task per write cost a task, its future, a done callback and a trip through a queue to the
dispatching coroutine for every write, all client CPU, which on a busy machine is wall time. Here
a fixed pool of workers takes the ready records from the scheduler itself: a worker that finishes
a write reports it (which may make its dependants ready) and takes the next one. A worker that
finds nothing ready sleeps until a write ends, the stale check answers, records read meanwhile
arrive (a saved plan applied as it is read: `loader.apply.feed`), or the apply is stopped; when
nothing is ready, nothing is in flight, nothing waits for the check and every record has arrived,
the apply is done.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from loader.apply.feed import Feed
from loader.apply.graph import Scheduler
from loader.apply.held import HeldRecords
from loader.plan.model import RecordPlan


class Writes(Protocol):
    """What the pool needs of the executor."""

    stop: asyncio.Event
    held: HeldRecords
    released: list[str]
    feed: Feed | None

    @property
    def all_arrived(self) -> bool: ...

    def next_write(self, scheduler: Scheduler) -> RecordPlan | None: ...
    async def write(self, record: RecordPlan) -> bool: ...
    def written(self, scheduler: Scheduler, ref: str, exists: bool) -> None: ...
    def stale_answered(self, scheduler: Scheduler) -> None: ...


class WorkerPool:
    """One run's workers over `scheduler`; `run` returns when every write is done or the apply stopped."""

    def __init__(self, writes: Writes, scheduler: Scheduler) -> None:
        self._writes = writes
        self._scheduler = scheduler
        self._busy = 0  # writes in flight
        self._sleeping: list[asyncio.Future[None]] = []
        self._answer_arrived = False

    async def run(self, concurrency: int) -> None:
        """Write with `concurrency` workers; the first error a worker raises is raised here, after
        the other workers are cancelled (as they are when this is cancelled from outside)."""
        loop = asyncio.get_running_loop()
        answer = self._writes.held.answer
        if answer is not None:
            answer.add_done_callback(self._answered)
        stopping = loop.create_task(self._wake_on_stop())
        if self._writes.feed is not None:  # records still being read: each batch wakes the sleepers
            self._writes.feed.start(lambda _: self._wake(len(self._sleeping)), self._writes.stop.set)
        workers = [loop.create_task(self._work()) for _ in range(max(1, concurrency))]
        try:
            done, _ = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
            for worker in done:
                error = worker.exception()
                if error is not None:
                    raise error
        finally:  # never leave writes running unowned: the others are cancelled, and have ended on return
            tasks = (*workers, stopping)
            for task in tasks:
                task.cancel()
            if answer is not None:
                answer.remove_done_callback(self._answered)
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _work(self) -> None:
        writes, scheduler = self._writes, self._scheduler
        while not writes.stop.is_set():
            if self._answer_arrived:
                self._answer_arrived = False
                writes.stale_answered(scheduler)
                self._wake(len(writes.released) + scheduler.ready_count())  # the records it let go
            record = writes.next_write(scheduler)
            if record is None:
                if self._busy == 0 and not writes.held.waiting and writes.all_arrived:
                    self._wake(len(self._sleeping))  # nothing in flight, nothing to wait for: the end
                    return
                await self._sleep()
                continue
            self._busy += 1
            try:
                exists = await writes.write(record)
            finally:
                self._busy -= 1
            writes.written(scheduler, record.ref, exists)
            if self._sleeping:  # its dependants may be ready now, or this was the last write
                self._wake(len(self._sleeping) if self._busy == 0 else scheduler.ready_count())

    async def _sleep(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._sleeping.append(waiter)
        await waiter

    def _wake(self, count: int) -> None:
        while count > 0 and self._sleeping:
            waiter = self._sleeping.pop()
            if not waiter.done():
                waiter.set_result(None)
                count -= 1

    def _answered(self, answer: asyncio.Future[dict[str, str]]) -> None:
        """The stale check answered: a worker takes the answer in (so what it raises is raised)."""
        if not answer.cancelled():
            self._answer_arrived = True
            self._wake(len(self._sleeping))

    async def _wake_on_stop(self) -> None:
        await self._writes.stop.wait()
        self._wake(len(self._sleeping))
