"""Making a plan: read the sources, fetch the live collections, diff (`loader.plan`).

The I/O around the pure planner. Live data comes from list requests only, one traversal per
collection, all collections concurrently and while the sheets are being read; each part of the plan
(`loader.plan.incremental.parts`) is diffed in a worker thread: its records that can be are planned as the
pages come in (`loader.plan.incremental.early`), the rest as soon as the collections it reads are in, while
other collections are still arriving:

    async with ApiClient(env, config.profile) as client:
        run = await run_plan(paths, config=config, env=env, client=client)   # run.plan + timings + counts

Which collections: the blocks' entities, every entity their references name (tags included), and
the members of their unique groups (a curriculum code is unique across all four types).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loader.api.client import ApiClient
from loader.collector import collector_paused
from loader.config import Config, Environment
from loader.console import Bars, progress_bars
from loader.event_loop import GiveWay, idle_of, loop_switches_quickly, never_give_way
from loader.live_records import updated_time
from loader.plan.diff import BlockInput, PlanHeader, plan_changes
from loader.plan.digest import block_digest, plan_digest
from loader.plan.incremental.early import EarlyDrafter
from loader.plan.incremental.parts import PlanPart, joined_plan, plan_parts, with_groups
from loader.plan.incremental.reading import read_off_loop
from loader.plan.model import Plan
from loader.profile import Profile
from loader.source.mapping import LoadedMapping
from loader.source.sources import SourceSet, load_mappings


@dataclass(frozen=True, repr=False)
class PlanRun:
    """A plan and what making it cost. Timings overlap: reading and fetching run side by side, and the
    parts of the plan are diffed while other collections are still arriving (`diffing_s` is their sum)."""

    plan: Plan
    sources: SourceSet
    live_counts: Mapping[str, int]  # entity -> live records fetched
    reading_s: float
    fetching_s: float  # until the last collection came in
    diffing_s: float
    total_s: float
    request_counts: Mapping[str, int] = field(default_factory=dict)  # requests this plan sent, by method
    digesting_s: float = 0.0  # the plan's digest, after the diff (within total_s)
    early_records: int = 0  # records planned before their part's last page came in (loader.plan.incremental.early)

    def __repr__(self) -> str:
        # Short on purpose: Python 3.11's asyncio.run formats the repr of a coroutine's result while
        # restoring the SIGINT handler, and a full repr of 100,000 records took seconds and 450 MB.
        return f"PlanRun({len(self.plan.records())} records, {self.total_s:.2f} s)"


async def run_plan(
    mapping_paths: Sequence[Path],
    *,
    config: Config,
    env: Environment,
    client: ApiClient,
    progress: bool | None = None,
    read_in_child: bool | None = None,
) -> PlanRun:
    """The plan for `mapping_paths` against the environment `client` talks to, with timings and request
    counts (for the plan command's -v and the benchmark).

    `read_in_child`: read the sources in a child process (True), in a thread (False), or decide by
    their size (None, see loader.plan.incremental.reading).
    """
    profile = config.profile
    paths = [Path(p) for p in mapping_paths]
    started = time.perf_counter()
    before = dict(client.request_counts)
    # The worker threads (reading's, the diff's) give way to the loop that brings the pages, if it
    # is one that knows when it is idle (loader.event_loop.run makes it).
    idle = idle_of(asyncio.get_running_loop())
    give_way = idle.give_way if idle is not None else never_give_way
    with progress_bars(progress) as bars, collector_paused(keep_survivors=True), loop_switches_quickly():
        # Each mapping file is read and parsed once, here: the collections to fetch and the sheets
        # to read both come from these (MappingError, before any request, if one cannot be read).
        mappings = load_mappings(paths, profile)
        collections = _Collections(client, bars)
        collections.fetch(entities_from_mappings(mappings, profile))
        reading = asyncio.create_task(_timed(_read(mappings, profile, bars, read_in_child, give_way)))
        planning: list[asyncio.Task[Plan]] = []
        try:
            # A collection the service refuses stops the plan at once, not after the reading.
            await collections.until_read(reading)
            sources, reading_s = reading.result()
            header = PlanHeader(
                environment=client.environment or env.name,
                api_version=client.api_version,
                base_url=env.base_url,
                env_name=env.name,
                fingerprints=sources.fingerprints,
                findings=sources.findings,
                created_at=datetime.now(UTC).replace(microsecond=0).isoformat(),
                extra={"profile": config.profile.fingerprint},
            )
            # off the event loop's back: finding what the records refer to walks them all (0.4 s at 250,000)
            parts = await asyncio.to_thread(plan_parts, sources.blocks, profile)
            # a safety net: the records name a collection the mapping files did not
            collections.fetch(e for part in parts for e in part.entities)
            diffing = _Diffing(sources.blocks, profile, header, give_way)
            planning += [asyncio.create_task(diffing.part(part, collections)) for part in parts]
            plans = await asyncio.gather(*planning)
            live = await collections.all()
        except BaseException:
            # One side failed (a missing mapping file, the service refusing): stop the rest quietly.
            for task in (reading, *planning):
                task.cancel()
            await asyncio.gather(reading, *planning, return_exceptions=True)
            await collections.cancel()
            raise
    plan = joined_plan(plans, parts) if parts else plan_changes((), {}, profile, header=header)
    # The parts were diffed before the last page came in: the environment and API version are the
    # ones the service reported by the end (the first answer may come after the reading).
    plan = replace(plan, environment=client.environment or env.name, api_version=client.api_version)
    # Recorded once: every report and plan.json shows it. Each block was hashed with its part.
    digest_started = time.perf_counter()
    plan = replace(plan, digest=plan_digest(plan, [diffing.digests[i] for i in range(len(plan.blocks))]))
    now = time.perf_counter()
    after = client.request_counts
    return PlanRun(
        plan=plan,
        sources=sources,
        live_counts={entity: len(records) for entity, records in live.items()},
        reading_s=reading_s,
        fetching_s=collections.finished - started,
        diffing_s=diffing.seconds,
        total_s=now - started,
        request_counts={k: after.get(k, 0) - before.get(k, 0) for k in after},
        digesting_s=diffing.digesting_s + now - digest_started,
        early_records=diffing.early_records,
    )


# When this share of a collection has come in, its records not matched yet are planned as creates (unsure;
# those matched by the rest are planned again): the last tenth of the subjects at 250,000 records is about
# 90 pages, 2 s, and planning their creates (about 37,000) takes 1 s of the worker's time.
NEARLY_WHOLE = 0.9


class _Collections:
    """The live collections, each fetched by its own task from the moment the plan is known to need it."""

    def __init__(self, client: ApiClient, bars: Bars):
        self._client = client
        self._bars = bars
        self._tasks: dict[str, asyncio.Task[list[dict[str, Any]]]] = {}
        self._records: dict[str, list[dict[str, Any]]] = {}  # as they come in
        self._totals: dict[str, int] = {}  # as the service counts them
        self._watchers: list[asyncio.Event] = []
        self.finished = time.perf_counter()  # when the last collection came in

    def fetch(self, entities: Iterable[str]) -> None:
        for entity in entities:
            if entity not in self._tasks:
                self._records[entity] = []
                task = self._tasks[entity] = asyncio.create_task(self._one(entity, self._records[entity]))
                task.add_done_callback(lambda _: self._changed())

    async def _one(self, entity: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        bar = self._bars.add(f"fetching {entity} records")

        def told(total: int) -> None:
            if self._totals.get(entity) != total:
                self._totals[entity] = total
                bar.set_total(total)

        async for batch in self._client.iter_collection_batches(entity, on_total=told):  # a page at a time
            records += map(_slim, batch)
            bar.advance(len(batch))
            self._changed()
        bar.done()
        self.finished = max(self.finished, time.perf_counter())
        return records

    def _changed(self) -> None:
        for watcher in self._watchers:
            watcher.set()

    def watch(self) -> asyncio.Event:
        """An event set whenever a record comes in or a collection is done (or failed): clear it, then wait."""
        event = asyncio.Event()
        self._watchers.append(event)
        return event

    def done(self, entities: Iterable[str]) -> bool:
        return all(self._tasks[entity].done() for entity in entities)

    def whole(self, entities: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """The collections among `entities` that are in, whole."""
        return {entity: self._records[entity] for entity in entities if _fetched(self._tasks[entity])}

    def nearly_whole(self, entities: Iterable[str]) -> set[str]:
        """The collections among `entities` still arriving with at most a tenth of their records to come
        (by the total the service gives): the drafter plans their records not matched yet as creates."""
        nearly = set()
        for entity in entities:
            total = self._totals.get(entity)
            if total and not self._tasks[entity].done() and len(self._records[entity]) >= total * NEARLY_WHOLE:
                nearly.add(entity)
        return nearly

    def arrived(self, entities: Iterable[str], since: dict[str, int]) -> dict[str, list[dict[str, Any]]]:
        """The records of `entities` (not whole) that came in since `since` (entity -> count, moved on)."""
        new = {}
        for entity in entities:
            records = self._records[entity]
            if not self._tasks[entity].done() and len(records) > since.get(entity, 0):
                new[entity] = records[since.get(entity, 0):]
                since[entity] = len(records)
        return new

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


class _Diffing:
    """Diffs the plan's parts one at a time, each as soon as its collections are in, in a worker thread
    so the event loop keeps fetching the rest meanwhile (see loader.plan.incremental.parts)."""

    def __init__(self, blocks: Sequence[BlockInput], profile: Profile, header: PlanHeader, give_way: GiveWay):
        self._blocks = blocks
        self._profile = profile
        self._header = header
        self._give_way = give_way
        self._one_at_a_time = asyncio.Lock()
        self.seconds = 0.0
        self.digesting_s = 0.0
        self.digests: dict[int, str] = {}  # block index -> block_digest
        self.early_records = 0

    async def part(self, part: PlanPart, collections: _Collections) -> Plan:
        drafter = None
        if not collections.done(part.entities):
            # Records planned while the part's last pages come in (loader.plan.incremental.early), each time some came.
            changed = collections.watch()
            blocks = part.blocks_of(self._blocks)
            async with self._one_at_a_time:
                drafter = await asyncio.to_thread(EarlyDrafter, blocks, self._profile, part.refers, self._give_way)
            since: dict[str, int] = {}
            while not collections.done(part.entities):
                changed.clear()
                whole, arrived = collections.whole(part.entities), collections.arrived(part.entities, since)
                nearly = collections.nearly_whole(part.entities)
                async with self._one_at_a_time:
                    await asyncio.to_thread(self._drafted, drafter, whole, arrived, nearly)
                if not collections.done(part.entities):
                    await changed.wait()
        live = await collections.of(part.entities)
        async with self._one_at_a_time:
            return await asyncio.to_thread(self._diffed, part, live, drafter)

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

    def _diffed(self, part: PlanPart, live: dict[str, list[dict[str, Any]]], drafter: EarlyDrafter | None) -> Plan:
        """In the worker thread: the part's plan, and its blocks' digests (see loader.plan.digest)."""
        started = time.perf_counter()
        early = drafter.settled(live) if drafter is not None else None
        self.early_records += len(early.plans) if early is not None else 0
        plan = plan_changes(
            part.blocks_of(self._blocks), live, self._profile, header=self._header, early=early, give_way=self._give_way
        )
        diffed = time.perf_counter()
        known = drafter.hashes if drafter is not None else None
        for index, block in zip(part.indexes, plan.blocks, strict=True):
            self.digests[index] = block_digest(block, known, self._give_way)
        self.seconds += diffed - started
        self.digesting_s += time.perf_counter() - diffed
        return plan


# ---- which collections ---------------------------------------------------------------------


def entities_from_mappings(mappings: Sequence[LoadedMapping], profile: Profile) -> list[str]:
    """The collections a plan of these mapping files needs, known before any sheet is read."""
    blocks: list[str] = []
    targets: list[str] = []
    for loaded in mappings:
        for block in loaded.mapping.blocks if loaded.mapping else ():
            blocks.append(block.entity)
            targets += [spec.ref for spec in block.fields if spec.ref]
    return with_groups([*blocks, *targets], profile)


# ---- reading and fetching -----------------------------------------------------------------


async def _read(
    mappings: Sequence[LoadedMapping], profile: Profile, bars: Bars, in_child: bool | None, give_way: GiveWay
) -> SourceSet:
    # Off the event loop's back (a child process for large sources), so pages keep coming meanwhile.
    bar = bars.add(f"reading {len(mappings)} mapping file(s) and their sheets", total=len(mappings))
    sources = await read_off_loop(mappings, profile, in_child=in_child, give_way=give_way)
    bar.done()
    return sources


def _slim(record: dict[str, Any]) -> dict[str, Any]:
    """The record without the metadata a plan never reads (who created and updated it): at 100,000
    records the audit users are a large share of the memory a plan takes."""
    if isinstance(record.get("metadata"), dict):
        record["metadata"] = {"updated": {"time": updated_time(record)}}
    return record


async def _timed(awaitable: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    result = await awaitable
    return result, time.perf_counter() - started
