"""Making a plan: read the sources, fetch the live collections, diff (`loader.plan`).

The I/O around the pure planner. Live data comes from list requests only, one traversal per
collection, all collections concurrently and while the sheets are being read; each part of the plan
(`loader.plan.incremental.parts`) is planned by `plan_changes` in a worker thread
(`loader.plan.incremental.diffing`) as soon as the collections it reads are in, while other
collections are still arriving (`loader.plan.incremental.collections`):

    async with ApiClient(env, config.profile) as client:
        run = await run_plan(paths, config=config, env=env, client=client)   # run.plan + timings + counts

Which collections: the blocks' entities, every entity their references name (tags included), and
the members of their unique groups (a curriculum code is unique across all four types).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, NamedTuple

from loader.api.client import ApiClient
from loader.api.users import fetch_users
from loader.config import Config, Environment
from loader.console import Bars, progress_bars
from loader.findings import Finding
from loader.history.decisions import Decisions
from loader.history.digests import Digester
from loader.history.personal import personal_entities
from loader.history.shape_store import read_shapes, shapes_path
from loader.history.store import History
from loader.plan.change_identity import personal_entities_of
from loader.plan.decisions_pass import Formers, SheetWins, no_formers, with_decisions
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.digest import plan_digest
from loader.plan.duplicates_pass import with_duplicates
from loader.plan.editors import editor_ids, with_editor_names
from loader.plan.failed_checks import with_every_errors_blocking
from loader.plan.incremental.collections import LiveCollections
from loader.plan.incremental.diffing import PartDiffing
from loader.plan.incremental.parts import PlanPart, joined_plan, plan_parts, with_groups
from loader.plan.incremental.reading import read_off_loop
from loader.plan.last_loaded import with_last_loaded
from loader.plan.model import Plan
from loader.plan.owners_gone import owners_gone
from loader.profile import Profile
from loader.source.block_records import BlockRecords
from loader.source.block_selection import selected_blocks
from loader.source.drift import drift_findings
from loader.source.mapping import LoadedMapping
from loader.source.named_sources import with_given
from loader.source.readers import Source
from loader.source.sources import SourceSet, load_mappings
from loader.words import plural


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

    def __repr__(self) -> str:
        # Short on purpose: Python 3.11's asyncio.run formats the repr of a coroutine's result while
        # restoring the SIGINT handler, and a full repr of a large plan is slow and large.
        return f"PlanRun({len(self.plan.records())} records, {self.total_s:.2f} s)"


async def run_plan(
    mapping_paths: Sequence[Path],
    *,
    config: Config,
    env: Environment,
    client: ApiClient,
    progress: bool | None = None,
    read_in_child: bool | None = None,
    history: History | None = None,
    service_user_ids: Sequence[str] = (),
    history_opener: Callable[[frozenset[str]], History | None] | None = None,
    decisions: Decisions | None = None,
    today: date | None = None,
    keep_sources: bool = True,
    given: Mapping[str, Source] | None = None,
    select: Sequence[str] = (),
) -> PlanRun:
    """The plan for `mapping_paths` against the environment `client` talks to, with timings and request
    counts (for the plan command's -v and the benchmark).

    `read_in_child`: sources read in a child process (True), a thread (False), or by size (None).
    `history` (or `history_opener`, given the entities with personal fields): compare three-way,
    refused first when of another database or behind the service (`service_user_ids`).
    `decisions`: reviewers' decisions honoured as of `today` (no clock here). `keep_sources=False`:
    each part's records are let go of once planned (`PlanRun.sources` without records). `given`:
    sources read in place of the mappings' named sources of those names (the Python API's tables).
    `select`: the blocks planned, as `--select` names them (`loader.source.block_selection`); none: all.
    """
    profile = config.profile
    started = time.perf_counter()
    before = dict(client.request_counts)
    with progress_bars(progress) as bars:
        # Each mapping file is read and parsed once, here: the collections to fetch and the sheets
        # to read both come from these (MappingError, before any request, if one cannot be read).
        mappings = load_mappings([Path(p) for p in mapping_paths], profile)
        if given:
            mappings = with_given(mappings, given)
        mappings, unselected = selected_blocks(mappings, select)  # a usage error before any request
        collections = LiveCollections(client, bars)
        collections.fetch(entities_from_mappings(mappings, profile))
        reading = asyncio.create_task(_timed_read(mappings, profile, bars, read_in_child))
        opening = asyncio.create_task(_opened(history, history_opener, mappings, profile))
        done = await _diffed(reading, opening, collections, config, env, client, service_user_ids,
                             _Deciding(decisions, today), keep_sources, unselected)
    plan = _joined(done, profile, client.environment or env.name, client.api_version, service_user_ids)
    if done.history is not None and done.history.started:  # records of a mapping file gone: said once
        plan = replace(plan, findings=(*plan.findings, *owners_gone(plan, done.history, _mapping_file_exists)))
    plan = await _described(plan, done.history, config, client)
    plan, digest_started = _decided_and_digested(plan, done, profile, decisions, today)
    return _measured(plan, done, collections, client, started, before, digest_started)


def _measured(plan: Plan, done: _Diffed, collections: LiveCollections, client: ApiClient, started: float,
              before: Mapping[str, int], digest_started: float) -> PlanRun:
    """The plan with what making it took: each stage's seconds (from the `perf_counter` readings given)
    and the requests sent since `before`."""
    now, diffing, after = time.perf_counter(), done.diffing, client.request_counts
    return PlanRun(
        plan=plan,
        sources=done.sources,
        live_counts={entity: collections.counts.get(entity, 0) for entity in done.live},
        reading_s=done.reading_s,
        fetching_s=collections.finished - started,
        diffing_s=diffing.seconds,
        total_s=now - started,
        request_counts={k: after.get(k, 0) - before.get(k, 0) for k in after},
        digesting_s=diffing.digesting_s + now - digest_started,
    )


def _joined(done: _Diffed, profile: Profile, environment: str, api_version: str | None,
            service_user_ids: Sequence[str]) -> Plan:
    """The parts' plans as one. The parts were diffed before the last page came in: the environment
    and API version are the ones the service reported by the end (the first answer may come after
    the reading)."""
    if done.parts:
        plan = joined_plan(done.plans, done.parts)
    else:  # nothing to plan: the empty plan, still named as compared against the history
        plan = plan_changes((), {}, profile, header=done.header, history=done.history,
                            service_user_ids=service_user_ids, sheet_wins=done.sheet_wins)
    return replace(plan, environment=environment, api_version=api_version)


async def _described(plan: Plan, history: History | None, config: Config, client: ApiClient) -> Plan:
    """The plan's conflicts and kept edits described for people: the value last loaded (from the
    journals) and who changed the field, by name (`report: {editors: name}`) where the service says."""
    if history is not None and history.started:
        plan = await asyncio.to_thread(with_last_loaded, plan, history)
    if config.editors in ("name", "email"):
        users = await fetch_users(client, editor_ids(plan))
        emails = {user_id: user.email_address for user_id, user in users.items() if user.email_address} \
            if config.editors == "email" else None
        plan = with_editor_names(plan, {user_id: user.name for user_id, user in users.items()}, emails)
    return plan


def _decided_and_digested(plan: Plan, done: _Diffed, profile: Profile, decisions: Decisions | None,
                          today: date | None) -> tuple[Plan, float]:
    """The plan with the records failing an `every` check blocked, the reviewers' decisions honoured,
    probable duplicate people held, and its digest recorded (every report and plan.json shows it);
    and when the digest was started. Each block was digested with its part: those digests serve
    while no pass changed the plan."""
    history = done.history
    # the digester the review workbook names changes with (loader.report.review_rows): the history's
    digester = history.digester if history is not None else None
    digest_started = time.perf_counter()
    compared = plan
    plan = with_every_errors_blocking(plan)  # as record-level checks block theirs
    if decisions is not None and decisions.entries:
        if today is None:
            raise ValueError("decisions need today's date")
        won = done.sheet_wins.matched if done.sheet_wins is not None else None
        plan = with_decisions(plan, decisions, digester or Digester(personal_entities_of(plan)), today, won,
                              _formers(history))
    rules = {b.block: rule for b in done.sources.blocks if (rule := getattr(b, "duplicates", None)) is not None}
    if rules:
        plan = with_duplicates(plan, rules, done.diffing.people, profile,
                               digester or Digester(personal_entities_of(plan)), decisions)
    diffing = done.diffing
    unchanged = plan is compared and len(diffing.digests) == len(plan.blocks)
    block_digests = [diffing.digests[i] for i in range(len(plan.blocks))] if unchanged else None
    return replace(plan, digest=plan_digest(plan, block_digests)), digest_started


def _formers(history: History | None) -> Formers:
    """The key tokens a record had before, as its history line keeps them (none without a history)."""
    if history is None:
        return no_formers
    snapshot = history.snapshot

    def formers(entity: str, token: str) -> tuple[str, ...]:
        line = snapshot.get(entity, token)
        return () if line is None else line.former_keys
    return formers


class _Diffed(NamedTuple):
    """What `_diffed` gives: the sources read, the plan's header, its parts' plans and the live collections."""

    sources: SourceSet
    reading_s: float
    header: PlanHeader
    parts: list[PlanPart]
    plans: list[Plan]
    diffing: PartDiffing
    live: dict[str, list[dict[str, Any]]]
    history: History | None  # the history opened (compared against once it has started)
    sheet_wins: SheetWins | None  # the conflicts decided for the sheet that the compare asked about


class _Deciding(NamedTuple):
    """Reviewers' decisions to honour, as of `today` (required with them: a plan reads no clock)."""

    decisions: Decisions | None
    today: date | None

    def sheet_wins(self, history: History, env_name: str) -> SheetWins | None:
        if self.decisions is None or not self.decisions.entries:
            return None
        if self.today is None:
            raise ValueError("decisions need today's date")
        return SheetWins(self.decisions, history.digester, env_name, self.today)


def _mapping_file_exists(file: str) -> bool:
    return Path(file).exists()


async def _opened(history: History | None, opener: Callable[[frozenset[str]], History | None] | None,
                  mappings: Sequence[LoadedMapping], profile: Profile) -> History | None:
    """The history to compare against: the one given, or the one `opener` opens, in a worker thread
    while the first pages come in (`_diffed` awaits it first: a wrong key is refused at once)."""
    if opener is not None:
        history = await asyncio.to_thread(opener, personal_entities(mappings, profile))
    return history


async def _diffed(
    reading: asyncio.Task[_Read], opening: asyncio.Task[History | None],
    collections: LiveCollections, config: Config, env: Environment, client: ApiClient,
    service_user_ids: Sequence[str], deciding: _Deciding, keep_sources: bool,
    unselected: Mapping[str, Sequence[str]],
) -> _Diffed:
    """The sources once read, and each part planned (with a `history`, three-way) as soon as its
    collections are in; when one side fails (a missing mapping file, the service refusing, a history
    refused), the rest is stopped quietly and it is raised. `keep_sources`: see `run_plan`;
    `unselected`: the blocks `--select` left out, by entity (`plan_changes`)."""
    planning: list[asyncio.Task[Plan]] = []
    try:
        history = await opening
        # A collection the service refuses stops the plan at once, not after the reading.
        await collections.until_read(reading)
        sources, reading_s = reading.result().taken()
        blocks = sources.blocks
        if not keep_sources:  # the scheduler holds the records, each part's until it is planned
            sources = replace(sources, blocks=tuple(replace(b, records=()) for b in blocks))
        header = PlanHeader(
            environment=client.environment or env.name,
            api_version=client.api_version,
            base_url=env.base_url,
            env_name=env.name,
            fingerprints=sources.fingerprints,
            # drift since the last apply comes first, beside the errors
            findings=(*_drift(config, env.name, blocks), *sources.findings),
            created_at=datetime.now(UTC).replace(microsecond=0).isoformat(),
            profile_fingerprint=config.profile.fingerprint,
        )
        # off the event loop's back: finding what the records refer to walks them all
        parts = await asyncio.to_thread(plan_parts, blocks, config.profile)
        # a safety net: the records name a collection the mapping files did not
        collections.fetch(e for part in parts for e in part.entities)
        sheet_wins = None
        if history is not None and history.started:  # nothing recorded yet: two-way
            sheet_wins = deciding.sheet_wins(history, env.name)
        diffing = PartDiffing(blocks, config.profile, header, history, service_user_ids, sheet_wins, unselected)
        del blocks
        planning += [asyncio.create_task(diffing.part(part, collections)) for part in parts]
        plans = await asyncio.gather(*planning)
        live = await collections.all()
    except BaseException:
        for task in (reading, opening, *planning):
            task.cancel()
        await asyncio.gather(reading, opening, *planning, return_exceptions=True)
        await collections.cancel()
        raise
    return _Diffed(sources, reading_s, header, parts, plans, diffing, live, history, sheet_wins)


def _drift(config: Config, env_name: str, blocks: Sequence[BlockRecords]) -> list[Finding]:
    """What changed in each source since the last apply; when a block asks for drift and there is
    nothing to compare (no history, or no apply yet), a note says so once."""
    path = shapes_path(config, env_name)
    previous = read_shapes(path)
    if previous is None and any(b.drift.place is not None for b in blocks):
        why = "the history is off (history: false)" if path is None else "no apply has recorded a shape yet"
        print(f"note: drift is not compared: {why}", file=sys.stderr)
    return drift_findings(previous or {}, blocks)


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


async def _read(mappings: Sequence[LoadedMapping], profile: Profile, bars: Bars, in_child: bool | None) -> SourceSet:
    # Off the event loop's back (a child process for large sources), so pages keep coming meanwhile.
    bar = bars.add(f"reading {plural(len(mappings), 'mapping file')} and their sheets", total=len(mappings))
    sources = await read_off_loop(mappings, profile, in_child=in_child)
    bar.done()
    return sources


class _Read:
    """The sources read and how long it took, handed over once: a task keeps its result, this lets
    go of the sources when taken (`run_plan(keep_sources=False)` lets go of them part by part)."""

    def __init__(self, sources: SourceSet, seconds: float) -> None:
        self._read: tuple[SourceSet, float] | None = (sources, seconds)

    def taken(self) -> tuple[SourceSet, float]:
        read, self._read = self._read, None
        if read is None:
            raise RuntimeError("the sources read were taken already")
        return read


async def _timed_read(mappings: Sequence[LoadedMapping], profile: Profile, bars: Bars, in_child: bool | None) -> _Read:
    started = time.perf_counter()
    sources = await _read(mappings, profile, bars, in_child)
    return _Read(sources, time.perf_counter() - started)
