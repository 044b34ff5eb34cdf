"""The live collections a plan reads, each fetched by its own task.

All collections are fetched side by side, a page at a time (list requests only, one traversal per
collection); each part of the plan is planned once its collections are in
(`loader.plan.incremental.diffing`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Any

from loader.api.client import ApiClient
from loader.console import Bars
from loader.live_records import LiveSlimmer


class LiveCollections:
    """The live collections, each fetched by its own task from the moment the plan is known to need it."""

    def __init__(self, client: ApiClient, bars: Bars):
        self._client = client
        self._bars = bars
        self._tasks: dict[str, asyncio.Task[list[dict[str, Any]]]] = {}
        self._records: dict[str, list[dict[str, Any]]] = {}  # as they come in
        self._totals: dict[str, int] = {}  # as the service counts them
        self.counts: dict[str, int] = {}  # entity -> its records fetched, once it is in (kept when released)
        self.finished = time.perf_counter()  # when the last collection came in

    def fetch(self, entities: Iterable[str]) -> None:
        for entity in entities:
            if entity not in self._tasks:
                self._records[entity] = []
                self._tasks[entity] = asyncio.create_task(self._one(entity, self._records[entity]))

    async def _one(self, entity: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        bar = self._bars.add(f"fetching {entity} records")

        def told(total: int) -> None:
            if self._totals.get(entity) != total:
                self._totals[entity] = total
                bar.set_total(total)

        slim = LiveSlimmer().slim  # what a plan never reads left out
        async for batch in self._client.iter_collection_batches(entity, on_total=told):  # a page at a time
            records += map(slim, batch)
            bar.advance(len(batch))
        bar.done()
        self.finished = max(self.finished, time.perf_counter())
        self.counts[entity] = len(records)
        return records

    def release(self, entities: Iterable[str]) -> None:
        """Let go of the records of `entities`, in and read for the last time (their part is planned and
        nothing after reads them): a plan's peak is at its last part, with every other part's records."""
        for entity in entities:
            if _fetched(self._tasks[entity]):
                self._records[entity].clear()  # the one list: the task's result too

    async def until_read(self, reading: asyncio.Task[Any]) -> None:
        """Wait for `reading`; raises its error, or a collection's as soon as one fails."""
        fetching = asyncio.gather(*self._tasks.values())
        await asyncio.wait((reading, fetching), return_when=asyncio.FIRST_COMPLETED)
        if fetching.done():
            fetching.result()  # a collection failed: raise its error now
            await reading
        else:
            fetching.add_done_callback(_retrieved)  # a later failure is raised where a part awaits it
        reading.result()

    async def of(self, entities: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        return {entity: await self._tasks[entity] for entity in entities}

    async def all(self) -> dict[str, list[dict[str, Any]]]:
        return await self.of(list(self._tasks))

    async def cancel(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)


def _fetched(task: asyncio.Task[Any]) -> bool:
    return task.done() and not task.cancelled() and task.exception() is None


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # marks it retrieved: the error is raised where a part awaits it

