"""Plan -> writes -> Results. The only module that writes to the service.

Records are written in dependency order, each as soon as every record it references exists,
up to `concurrency` at a time, with no barrier between entity types. A create whose answer was
lost (or that meets a 409) is resolved by looking the record up under its key and adopting it,
so a re-send never makes a duplicate (loader.apply.creating); one record is written by
loader.apply.writing. With a history, each write is journaled as its answer arrives
(loader.apply.journaling) and the apply's journal is finished at the end, also after an
interruption or failures: the partial history is kept. The records of a sealed plan.json may
arrive while the apply runs (`ApplyOptions.more`, `loader.apply.feed`): the scheduler walks them
as they come, with the results they would have had.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from loader.apply.creating import Creator, WriteClient
from loader.apply.failures import CONFLICT_HIDDEN as CONFLICT_HIDDEN
from loader.apply.feed import Feed, RecordFeed
from loader.apply.graph import Scheduler, build_graph
from loader.apply.held import HeldRecords
from loader.apply.journaling import ApplyJournal
from loader.apply.payloads import UnresolvedPending, substitute
from loader.apply.pool import WorkerPool
from loader.apply.results import Outcome, RecordResult, Results, results_in_plan_order
from loader.apply.stale import StaleCheck
from loader.apply.writing import RecordWriter, result_of
from loader.errors import LoaderError
from loader.history.lines import Owner
from loader.history.store import History
from loader.places import CellRef
from loader.plan.model import Plan, RecordPlan
from loader.profile import Profile


@dataclass(frozen=True)
class ApplyOptions:
    """`skip` maps refs to the reason they must not be written (e.g. stale); their dependants follow.
    `stale`: a stale check running beside the writes, whose answer is taken as `skip` is, before any
    record it checks (or one referring to those) is written (`loader.apply.held`)."""

    concurrency: int = 8
    partial: bool = False
    max_create_attempts: int = 8
    skip: Mapping[str, str] = field(default_factory=dict)
    stale: StaleCheck | None = None
    more: RecordFeed | None = None  # records still being read (`loader.apply.feed`): the plan's blocks hold none


ResultListener = Callable[[RecordResult], None]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _blocked_reason(record: RecordPlan) -> str:
    errors = record.errors
    if errors:
        first = errors[0]
        place = f" at {first.where}" if first.where else ""
        return f"not applied: {first.message}{place}"
    return "not applied: it depends on a record with errors"


class _Executor:
    def __init__(
        self,
        plan: Plan,
        client: WriteClient,
        profile: Profile,
        options: ApplyOptions,
        stop: asyncio.Event,
        listener: ResultListener | None,
        journal: ApplyJournal | None = None,
    ) -> None:
        self.plan = plan
        self.client = client
        self.profile = profile
        self.options = options
        self.stop = stop
        self.listener = listener
        self.journal = journal
        self.records: dict[str, RecordPlan] = {}
        # Plans written before blocks carried their key fields: the profile's key.
        self.key_fields = {
            b.name: b.key_fields or (profile.entities[b.entity].key if b.entity in profile.entities else ())
            for b in plan.blocks
        }
        self.ids: dict[str, str] = {}
        creator = Creator(client, self.key_fields, options.max_create_attempts, journal)
        self.writer = RecordWriter(client, creator, journal)
        self.results: dict[str, RecordResult] = {}
        self.referrers: dict[str, list[str]] = {}  # ref -> records referring to it by its live id
        self._take(plan.records())
        self.held = HeldRecords(options.stale, lambda ref: self.referrers.get(ref, ()))
        self.released: list[str] = []  # parked records the stale check let go, to dispatch first
        self.feed = None if options.more is None else Feed(options.more, self._arrived)
        self.scheduler = Scheduler(profile.creation_order)

    def _take(self, records: Iterable[RecordPlan]) -> None:
        for record in records:
            self.records[record.ref] = record
            if record.live_id:
                self.ids[record.ref] = record.live_id
            for target in record.refers_to:
                self.referrers.setdefault(target, []).append(record.ref)

    def _emit(self, result: RecordResult) -> None:
        self.results[result.ref] = result
        if self.journal is not None and result.outcome in _CONFIRMING:
            self.journal.confirmed(self.records[result.ref], result.id)
        if self.listener is not None:
            self.listener(result)

    def _skip(self, refs: Iterable[str], message: str) -> None:
        for ref in refs:
            if ref not in self.results:
                record = self.records[ref]
                self._emit(result_of(record, Outcome.SKIPPED, id=record.live_id, message=message))

    def _referring_to(self, ref: str) -> list[str]:
        """Records that refer to `ref` by its live id, directly or through one another."""
        found: list[str] = []
        queue = [ref]
        while queue:
            for referrer in self.referrers.get(queue.pop(), ()):
                if referrer not in found and referrer != ref:
                    found.append(referrer)
                    queue.append(referrer)
        return found

    def _skip_blocked(self, record: RecordPlan) -> None:
        if record.ref not in self.results:
            cells = tuple(f.where for f in record.errors if isinstance(f.where, CellRef))
            message = _blocked_reason(record)
            self._emit(result_of(record, Outcome.SKIPPED, id=record.live_id, message=message, cells=cells,
                                 blocked=True))

    async def run(self) -> tuple[RecordResult, ...]:
        scheduler = self.scheduler
        if self.feed is not None:
            if self.options.skip:
                raise ValueError("ApplyOptions.skip goes with a plan whose records are all there")
        else:
            missing = build_graph(self.records.values(), self.profile.creation_order).missing
            scheduler.add(tuple(self.records.values()), absent_ok=True)
            self._apply_skips(self.options.skip, scheduler)
            for ref, absent in missing.items():
                self._skip([ref], f"not applied: depends on {absent[0]}, not in this plan")
                self._skip(scheduler.withdraw([ref]), f"not applied: depends on {ref}, skipped")
            self._skip_all_blocked(self.records.values(), scheduler)
        await self._run_dispatch(scheduler)
        return results_in_plan_order(self.results.values(), scheduler.refs)

    def _skip_all_blocked(self, records: Iterable[RecordPlan], scheduler: Scheduler) -> None:
        for record in records:
            if record.blocked or record.errors:
                self._skip_blocked(record)
                for dependant in sorted(scheduler.withdraw([record.ref])):
                    self._skip_blocked(self.records[dependant])

    async def _run_dispatch(self, scheduler: Scheduler) -> None:
        pool = WorkerPool(self, scheduler)
        try:
            await pool.run(self.options.concurrency)
        finally:
            self.held.cancel()
            if self.feed is not None:
                await self.feed.finish(cancel=not self.stop.is_set())
        if self.stop.is_set():
            self._skip([*self.held.parked, *self.released, *scheduler.pending()],
                       "not applied: interrupted before it was sent")

    def _arrived(self, records: Sequence[RecordPlan]) -> None:
        """Records read while the apply runs, walked as if they had been there from the start: one
        whose dependency ended without success meanwhile is skipped as that end would have skipped it."""
        self._take(records)
        self.held.take(records)
        for ref, (cause, failed) in self.scheduler.add(records).items():
            record, root = self.records[ref], self.records[cause]
            if record.blocked or record.errors or root.blocked or root.errors:
                self._skip_blocked(record)
            else:
                self._skip([ref], f"not applied: depends on {cause}, {'which failed' if failed else 'skipped'}")
        self._skip_all_blocked(records, self.scheduler)

    def _apply_skips(self, skip: Mapping[str, str], scheduler: Scheduler) -> None:
        for ref, reason in skip.items():
            if ref in self.records:
                self._skip([ref], reason)
                self._skip(scheduler.withdraw([ref]), f"not applied: depends on {ref}, skipped")
                for referrer in self._referring_to(ref):
                    self._skip([referrer], f"not applied: refers to {ref}, skipped")
                    self._skip(scheduler.withdraw([referrer]), f"not applied: depends on {referrer}, skipped")

    def stale_answered(self, scheduler: Scheduler) -> None:
        """The stale check's skips taken as `options.skip` is; the records parked for it released."""
        skip, parked = self.held.answered()
        self._apply_skips(skip, scheduler)
        for ref in parked:
            if ref in self.results:  # skipped: its dependants were withdrawn with it
                scheduler.failed(ref)
            else:
                self.released.append(ref)

    def next_write(self, scheduler: Scheduler) -> RecordPlan | None:
        """The next record to write (released records first), settling on the way the records that
        need no write: skipped before their turn, parked for the stale check, unchanged."""
        while True:
            ready = self.released.pop() if self.released else scheduler.next_ready()
            if ready is None:
                return None
            if ready in self.results:  # skipped before dispatch
                scheduler.failed(ready)
                continue
            if self.held.park(ready):
                continue
            record = self.records[ready]
            if not record.has_changes:
                self._emit(result_of(record, Outcome.UNCHANGED, id=record.live_id))
                scheduler.succeeded(ready)
                continue
            return record

    def written(self, scheduler: Scheduler, ref: str, exists: bool) -> None:
        if exists:
            scheduler.succeeded(ref)
        else:
            self._skip(scheduler.failed(ref), f"not applied: depends on {ref}, which failed")

    @property
    def all_arrived(self) -> bool:
        """Whether every record of the plan is here (a plan read as it is applied: `options.more`)."""
        return self.feed is None or self.feed.done

    async def write(self, record: RecordPlan) -> bool:
        """Write one record; whether the record now exists with a known id."""
        try:
            entity = self.profile.entity(record.entity)
            payload = substitute(record.payload, self.ids)
        except UnresolvedPending as missing:
            self._emit(result_of(record, Outcome.SKIPPED, message=f"not applied: {missing.ref} was not created"))
            return False
        except LoaderError as error:  # an entity the profile does not know: this record fails, not the run
            self._emit(result_of(record, Outcome.FAILED, id=record.live_id, message=str(error)))
            return False
        result = await self.writer.write(record, entity, payload)
        if result.id is not None:  # created (perhaps a later step failed): dependants can use it
            self.ids[record.ref] = result.id
        self._emit(result)
        return result.id is not None


_CONFIRMING = frozenset({Outcome.CREATED, Outcome.UPDATED, Outcome.UNCHANGED})


async def apply_plan(
    plan: Plan,
    client: WriteClient,
    profile: Profile,
    options: ApplyOptions | None = None,
    *,
    stop: asyncio.Event | None = None,
    listener: ResultListener | None = None,
    environment: str | None = None,
    history: History | None = None,
    journal_by: str | None = None,
) -> Results:
    """Apply `plan` through `client`; every record of the plan gets a RecordResult.

    Checks (errors without --partial, --max-changes, stale records) are the caller's: see
    `loader.apply.guards` and `loader.apply.stale`. Setting `stop` stops dispatching; records in
    flight finish, the rest are reported skipped and `Results.interrupted` is true. With a
    `history`, every write is journaled as its answer arrives (`journal_by` names who applied), and
    the journal is finished and folded at the end however the apply ended; an apply that wrote
    nothing leaves no trace.
    """
    options = options or ApplyOptions()
    stop = stop or asyncio.Event()
    started, clock = _now(), time.monotonic()
    target = environment or plan.environment
    renamed = tuple((Owner(b.mapping_file or b.source_file, b.name), Owner(*b.formerly))
                    for b in plan.blocks if b.formerly is not None)  # the head keeps them: ownership follows
    writer = None if history is None else history.begin_apply(target, plan_digest=plan.digest, by=journal_by,
                                                               renamed=renamed)
    journal = None if writer is None else ApplyJournal(writer, plan, profile)
    executor = _Executor(plan, client, profile, options, stop, listener, journal)
    try:
        if journal is not None:
            journal.released(plan)  # the records the plan stops managing: nothing to write, only forgotten
        records = await executor.run()
    finally:  # also after Ctrl-C or a crash: what was written stays journaled, and is folded
        if history is not None and writer is not None:
            history.finish_apply(writer, _outcome_counts(executor.results.values(), stop.is_set()))
    counts = getattr(client, "request_counts", {})
    return Results(
        environment=target,
        env_name=plan.env_name,
        records=records,
        interrupted=stop.is_set(),
        started_at=started,
        finished_at=_now(),
        request_counts=dict(counts),
        block_sources={b.name: (b.source_file, b.sheet) for b in plan.blocks},
        apply_id=writer.info.apply_id if writer is not None and _wrote(records) else None,
        elapsed_s=time.monotonic() - clock,
    )


def _wrote(records: Iterable[RecordResult]) -> bool:
    """True when the apply created or updated a record: only then does its journal stay in the history."""
    return any(r.outcome in (Outcome.CREATED, Outcome.UPDATED) for r in records)


def _outcome_counts(results: Iterable[RecordResult], interrupted: bool) -> dict[str, int]:
    """What the journal's end line counts: records per outcome, adoptions, and an interruption."""
    counts = Counter(str(result.outcome) for result in results)
    counts["adopted"] = sum(1 for result in results if result.adopted)
    return {**{name: n for name, n in sorted(counts.items()) if n}, **({"interrupted": 1} if interrupted else {})}
