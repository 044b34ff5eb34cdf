"""Making a plan: read the sources, fetch the live collections, diff (`loader.plan`).

The I/O around the pure planner. Live data comes from list requests only, one traversal per
collection, all collections concurrently and while the sheets are being read:

    async with ApiClient(env, config.profile) as client:
        run = await run_plan(paths, config=config, env=env, client=client)   # run.plan + timings + counts

Which collections: the blocks' entities, every entity their references name (tags included), and
the members of their unique groups (a curriculum code is unique across all four types).
"""

from __future__ import annotations

import asyncio
import gc
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
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.digest import plan_digest
from loader.plan.model import Plan
from loader.plan.reading import read_off_loop
from loader.profile import Profile
from loader.source.mapping import LoadedMapping
from loader.source.records import Ref
from loader.source.sources import SourceSet, load_mappings


@dataclass(frozen=True, repr=False)
class PlanRun:
    """A plan and what making it cost. Timings overlap: reading and fetching run side by side."""

    plan: Plan
    sources: SourceSet
    live_counts: Mapping[str, int]  # entity -> live records fetched
    reading_s: float
    fetching_s: float
    diffing_s: float
    total_s: float
    request_counts: Mapping[str, int] = field(default_factory=dict)  # requests this plan sent, by method
    digesting_s: float = 0.0  # the plan's digest, after the diff (within total_s)

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
    their size (None, see loader.plan.reading).
    """
    profile = config.profile
    paths = [Path(p) for p in mapping_paths]
    started = time.perf_counter()
    before = dict(client.request_counts)
    with progress_bars(progress) as bars, collector_paused():
        # Each mapping file is read and parsed once, here: the collections to fetch and the sheets
        # to read both come from these (MappingError, before any request, if one cannot be read).
        mappings = load_mappings(paths, profile)
        wanted = entities_from_mappings(mappings, profile)
        reading = asyncio.create_task(_timed(_read(mappings, profile, bars, read_in_child)))
        fetching = asyncio.create_task(_timed(_fetch(client, wanted, bars)))
        try:
            (sources, reading_s), (live, fetching_s) = await asyncio.gather(reading, fetching)
        except BaseException:
            # One side failed (a missing mapping file, the service refusing): stop the other quietly.
            for task in (reading, fetching):
                task.cancel()
            await asyncio.gather(reading, fetching, return_exceptions=True)
            raise
        missing = [e for e in live_entities(sources, profile) if e not in live]
        if missing:  # a safety net: the sources name a collection the mapping files did not
            more, more_s = await _timed(_fetch(client, missing, bars))
            live = {**live, **more}
            fetching_s += more_s
    diff_started = time.perf_counter()
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
    # The inputs live until the end; freezing them keeps the collector from rescanning them each time
    # the diff allocates (measured: about a fifth of the diffing time at 100,000 records). The diff
    # itself makes no reference cycles worth collecting, and the collector walking the plan it builds
    # cost another third of the diff (bench_diff.py, 100,000 records): it is off while the diff runs.
    gc.freeze()
    collecting = gc.isenabled()
    gc.disable()
    try:
        plan = plan_changes(sources.blocks, live, profile, header=header)
        diffed = time.perf_counter()
        # Recorded once: every report and plan.json shows it (a pass over every record each time).
        plan = replace(plan, digest=plan_digest(plan))
    finally:
        if collecting:
            gc.enable()
        gc.unfreeze()
    now = time.perf_counter()
    after = client.request_counts
    return PlanRun(
        plan=plan,
        sources=sources,
        live_counts={entity: len(records) for entity, records in live.items()},
        reading_s=reading_s,
        fetching_s=fetching_s,
        diffing_s=diffed - diff_started,
        total_s=now - started,
        request_counts={k: after.get(k, 0) - before.get(k, 0) for k in after},
        digesting_s=now - diffed,
    )


# ---- which collections ---------------------------------------------------------------------


def entities_from_mappings(mappings: Sequence[LoadedMapping], profile: Profile) -> list[str]:
    """The collections a plan of these mapping files needs, known before any sheet is read."""
    blocks: list[str] = []
    targets: list[str] = []
    for loaded in mappings:
        for block in loaded.mapping.blocks if loaded.mapping else ():
            blocks.append(block.entity)
            targets += [spec.ref for spec in block.fields if spec.ref]
    return _with_groups([*blocks, *targets], profile)


def live_entities(sources: SourceSet, profile: Profile) -> list[str]:
    """The collections a plan of `sources` needs, from the records themselves."""
    wanted = [b.entity for b in sources.blocks]
    for b in sources.blocks:
        for rec in b.records:
            wanted += [ref.entity for ref in _refs(rec.fields.values())]
            wanted += [ref.entity for ref in _refs(rec.key)]
    return _with_groups(wanted, profile)


def _with_groups(entities: Iterable[str], profile: Profile) -> list[str]:
    out: list[str] = []
    for entity in entities:
        if entity not in profile.entities:
            continue
        group = profile.unique_group_of(entity)
        out += [entity, *(group[1] if group else ())]
    return list(dict.fromkeys(out))


def _refs(values: Iterable[Any]) -> Iterable[Ref]:
    for value in values:
        if isinstance(value, Ref):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, Ref))


# ---- reading and fetching -----------------------------------------------------------------


async def _read(mappings: Sequence[LoadedMapping], profile: Profile, bars: Bars, in_child: bool | None) -> SourceSet:
    # Off the event loop's back (a child process for large sources), so pages keep coming meanwhile.
    bar = bars.add(f"reading {len(mappings)} mapping file(s) and their sheets", total=len(mappings))
    sources = await read_off_loop(mappings, profile, in_child=in_child)
    bar.done()
    return sources


async def _fetch(client: ApiClient, entities: Sequence[str], bars: Bars) -> dict[str, list[dict[str, Any]]]:
    async def one(entity: str) -> list[dict[str, Any]]:
        bar = bars.add(f"fetching {entity} records")
        records = []
        async for record in client.iter_collection(entity):
            records.append(_slim(record))
            bar.advance()
        bar.done()
        return records

    async with asyncio.TaskGroup() as group:
        tasks = {entity: group.create_task(one(entity)) for entity in entities}
    return {entity: task.result() for entity, task in tasks.items()}


def _slim(record: dict[str, Any]) -> dict[str, Any]:
    """The record without the metadata a plan never reads (who created and updated it): at 100,000
    records the audit users are a large share of the memory a plan takes."""
    metadata = record.get("metadata")
    if isinstance(metadata, dict):
        updated = metadata.get("updated")
        time_ms = updated.get("time") if isinstance(updated, dict) else None
        record["metadata"] = {"updated": {"time": time_ms}}
    return record


async def _timed(awaitable: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    result = await awaitable
    return result, time.perf_counter() - started
