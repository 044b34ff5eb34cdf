"""Plan -> writes -> Results. The only module that writes to the service.

Records are written in dependency order, each as soon as every record it references exists,
up to `concurrency` at a time, with no barrier between entity types. A create whose answer was
lost (or that meets a 409) is resolved by looking the record up under its key and adopting it,
so a re-send never makes a duplicate. An update whose retries ran out on failures that may hide
a committed write is looked up by id, and done when the record holds it (loader.apply.confirm).
Status paths (DRAFT -> READY -> ACTIVE) are consecutive updates of a record after its create or
update.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from loader.api.errors import ApiError, Conflict, HttpError, OutcomeUnknown
from loader.apply.confirm import outcome_unknown, update_landed
from loader.apply.graph import Scheduler, build_graph
from loader.apply.payloads import UnresolvedPending, filterable, lookup_key, matches_key, missing_changes, substitute
from loader.apply.results import Outcome, RecordResult, Results, results_in_plan_order
from loader.errors import LoaderError
from loader.places import CellRef
from loader.plan.model import Action, Plan, RecordPlan
from loader.profile import EntityProfile, Profile


class WriteClient(Protocol):
    """What the executor needs of `loader.api.client.ApiClient`."""

    async def create(self, entity: str, payload: Mapping[str, Any]) -> dict[str, Any]: ...
    async def update(self, entity: str, record_id: str, payload: Mapping[str, Any]) -> dict[str, Any]: ...
    async def get(self, entity: str, id_or_code: str) -> dict[str, Any] | None: ...
    async def fetch_collection(
        self, entity: str, filters: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class ApplyOptions:
    """`skip` maps refs to the reason they must not be written (e.g. stale); their dependants follow."""

    concurrency: int = 8
    partial: bool = False
    max_create_attempts: int = 8
    skip: Mapping[str, str] = field(default_factory=dict)


ResultListener = Callable[[RecordResult], None]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _result(record: RecordPlan, outcome: Outcome, **values: Any) -> RecordResult:
    return RecordResult(
        ref=record.ref,
        block=record.block,
        entity=record.entity,
        key=record.key,
        outcome=outcome,
        source=str(record.source),
        row=record.row,
        **values,
    )


def _blocked_reason(record: RecordPlan) -> str:
    errors = record.errors
    if errors:
        first = errors[0]
        place = f" at {first.where}" if first.where else ""
        return f"not applied: {first.message}{place}"
    return "not applied: it depends on a record with errors"


class _Failure(Exception):
    """A record could not be written; carries what the results need."""

    def __init__(self, message: str, *, status: int | None, attempts: int, record_id: str | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.attempts = attempts
        self.record_id = record_id


class _Executor:
    def __init__(
        self,
        plan: Plan,
        client: WriteClient,
        profile: Profile,
        options: ApplyOptions,
        stop: asyncio.Event,
        listener: ResultListener | None,
    ) -> None:
        self.plan = plan
        self.client = client
        self.profile = profile
        self.options = options
        self.stop = stop
        self.listener = listener
        self.records = {r.ref: r for r in plan.records()}
        # Plans written before blocks carried their key fields: the profile's key.
        self.key_fields = {
            b.name: b.key_fields or (profile.entities[b.entity].key if b.entity in profile.entities else ())
            for b in plan.blocks
        }
        self.ids: dict[str, str] = {r.ref: r.live_id for r in plan.records() if r.live_id}
        self.results: dict[str, RecordResult] = {}
        self.referrers: dict[str, list[str]] = {}  # ref -> records referring to it by its live id
        for record in self.records.values():
            for target in record.refers_to:
                self.referrers.setdefault(target, []).append(record.ref)

    def _emit(self, result: RecordResult) -> None:
        self.results[result.ref] = result
        if self.listener is not None:
            self.listener(result)

    def _skip(self, refs: Iterable[str], message: str) -> None:
        for ref in refs:
            if ref not in self.results:
                record = self.records[ref]
                self._emit(_result(record, Outcome.SKIPPED, id=record.live_id, message=message))

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
            self._emit(_result(record, Outcome.SKIPPED, id=record.live_id, message=message, cells=cells, blocked=True))

    async def run(self) -> tuple[RecordResult, ...]:
        graph = build_graph(self.records.values(), self.profile.creation_order)
        scheduler = Scheduler(graph)
        for ref, reason in self.options.skip.items():
            if ref in self.records:
                self._skip([ref], reason)
                self._skip(scheduler.withdraw([ref]), f"not applied: depends on {ref}, skipped")
                for referrer in self._referring_to(ref):
                    self._skip([referrer], f"not applied: refers to {ref}, skipped")
                    self._skip(scheduler.withdraw([referrer]), f"not applied: depends on {referrer}, skipped")
        for ref, absent in graph.missing.items():
            self._skip([ref], f"not applied: depends on {absent[0]}, not in this plan")
            self._skip(scheduler.withdraw([ref]), f"not applied: depends on {ref}, skipped")
        for record in self.records.values():
            if record.blocked or record.errors:
                self._skip_blocked(record)
                for dependant in sorted(scheduler.withdraw([record.ref])):
                    self._skip_blocked(self.records[dependant])

        tasks: dict[asyncio.Task[tuple[str, bool]], str] = {}
        try:
            await self._dispatch(scheduler, tasks)
        finally:
            for task in tasks:  # only when cancelled from outside: never leave writes running unowned
                task.cancel()
        if self.stop.is_set():
            self._skip(scheduler.pending(), "not applied: interrupted before it was sent")
        return results_in_plan_order(self.results.values(), graph.refs)

    async def _dispatch(self, scheduler: Scheduler, tasks: dict[asyncio.Task[tuple[str, bool]], str]) -> None:
        # Finished writes arrive through a queue fed by each task's done callback: asyncio.wait over
        # every task in flight would add and remove a callback per task for each completion.
        finished: asyncio.Queue[asyncio.Task[tuple[str, bool]]] = asyncio.Queue()
        while True:
            while len(tasks) < self.options.concurrency and not self.stop.is_set():
                ready = scheduler.next_ready()
                if ready is None:
                    break
                if ready in self.results:  # skipped before dispatch
                    scheduler.failed(ready)
                    continue
                record = self.records[ready]
                if not record.has_changes:
                    self._emit(_result(record, Outcome.UNCHANGED, id=record.live_id))
                    scheduler.succeeded(ready)
                    continue
                task = asyncio.create_task(self._write(record))
                task.add_done_callback(finished.put_nowait)
                tasks[task] = ready
            if not tasks:
                break
            done = [await finished.get()]
            while not finished.empty():
                done.append(finished.get_nowait())
            for task in done:
                ref = tasks.pop(task)
                _, exists = task.result()
                if exists:
                    scheduler.succeeded(ref)
                else:
                    self._skip(scheduler.failed(ref), f"not applied: depends on {ref}, which failed")

    async def _write(self, record: RecordPlan) -> tuple[str, bool]:
        """Write one record; returns (ref, whether the record now exists with a known id)."""
        try:
            entity = self.profile.entity(record.entity)
            payload = substitute(record.payload, self.ids)
        except UnresolvedPending as missing:
            self._emit(_result(record, Outcome.SKIPPED, message=f"not applied: {missing.ref} was not created"))
            return record.ref, False
        except LoaderError as error:  # an entity the profile does not know: this record fails, not the run
            self._emit(_result(record, Outcome.FAILED, id=record.live_id, message=str(error)))
            return record.ref, False
        attempts = 0
        record_id: str | None = record.live_id
        live_status: str | None = None
        adopted = False
        try:
            if record.action is Action.CREATE:
                record_id, attempts, adopted, live_status = await self._create(record, entity, payload)
                self.ids[record.ref] = record_id
            elif record.action is Action.UPDATE and payload:
                if record_id is None:
                    raise _Failure("the plan gives no id for this update", status=None, attempts=0)
                attempts += 1
                await self._update(entity, record_id, payload, attempts=attempts)
            reached, steps = await self._status_steps(record, entity, record_id, live_status, adopted, attempts)
            attempts += steps
        except LoaderError as error:  # e.g. the profile cannot write this entity: this record fails, not the run
            self._emit(_result(record, Outcome.FAILED, id=record_id, message=str(error), attempts=attempts))
            return record.ref, record_id is not None
        except _Failure as failure:
            known_id = failure.record_id or record_id
            if known_id is not None:  # created, then a later step failed: dependants can still use it
                self.ids[record.ref] = known_id
            self._emit(
                _result(
                    record,
                    Outcome.FAILED,
                    id=known_id,
                    status=failure.status,
                    message=_shown_message(failure, record),
                    attempts=failure.attempts,
                )
            )
            return record.ref, known_id is not None
        sent = tuple(payload) + ((entity.status.field,) if entity.status and record.status_path else ())
        outcome = Outcome.CREATED if record.action is Action.CREATE else Outcome.UPDATED
        self._emit(
            _result(
                record, outcome, id=record_id, fields=sent, attempts=attempts, adopted=adopted, record_status=reached
            )
        )
        return record.ref, True

    async def _status_steps(
        self,
        record: RecordPlan,
        entity: EntityProfile,
        record_id: str | None,
        live: str | None,
        adopted: bool,
        attempts: int,
    ) -> tuple[str | None, int]:
        """Send the status path one update at a time; returns (state reached, updates sent)."""
        rule = entity.status
        if not record.status_path or rule is None:
            return None, 0
        steps: tuple[str, ...] = record.status_path
        if adopted and live is not None:
            # The adopted record may already be part-way (or all the way) along the path.
            path = rule.path(live, record.status_path[-1])
            steps = path if path is not None else record.status_path
        sent = 0
        for state in steps:
            sent += 1
            await self._update(
                entity, str(record_id), {rule.field: state},
                attempts=attempts + sent, failed_id=record_id, doing=f"setting {rule.field} to {state}",
            )
        return record.status_path[-1], sent

    async def _update(
        self,
        entity: EntityProfile,
        record_id: str,
        payload: Mapping[str, Any],
        *,
        attempts: int,
        failed_id: str | None = None,
        doing: str | None = None,
    ) -> None:
        """PATCH `payload`; when its retries ran out on failures that may hide a committed write,
        the record is looked up by id, and the update is done if it holds every field as sent."""
        try:
            await self.client.update(entity.name, record_id, payload)
        except ApiError as error:
            if outcome_unknown(error) and await update_landed(self.client.get, entity, record_id, payload):
                return
            raise _failure(error, attempts=attempts, record_id=failed_id, doing=doing) from None

    async def _create(
        self, record: RecordPlan, entity: EntityProfile, payload: dict[str, Any]
    ) -> tuple[str, int, bool, str | None]:
        """POST, resolving lost answers and conflicts by key. Returns (id, attempts, adopted, live status).

        The create is re-sent only after a look-up under the key proved the record absent, so a
        lost answer never makes a duplicate. When the look-up itself cannot be done, the record
        fails as unknown (a re-run converges) rather than risk a second create.
        """
        key = lookup_key(payload, self.key_fields.get(record.block, entity.key), entity)
        attempts = 0
        last: ApiError | None = None
        last_unknown: OutcomeUnknown | None = None  # an earlier create of this run may have arrived
        while attempts < self.options.max_create_attempts:
            attempts += 1
            conflict: Conflict | None = None
            try:
                created = await self.client.create(entity.name, payload)
                if created.get("id"):
                    return str(created["id"]), attempts, False, _status_of(created, entity)
                # A success without an id (e.g. envelope names the profile gets wrong): find it by key.
                raise OutcomeUnknown(
                    "the service accepted the create but its answer holds no id",
                    method=entity.create.method if entity.create else "POST", path=entity.path,
                )
            except OutcomeUnknown as error:
                last = last_unknown = error
            except Conflict as error:
                last = conflict = error
            except ApiError as error:
                raise _failure(error, attempts=attempts) from None
            if key is None:
                raise _failure(last, attempts=attempts, doing="creating (no key to look the record up by)")
            unexplained = conflict if last_unknown is None else None
            adopted = await self._adopt(entity, key, payload, attempts, unexplained)
            if adopted is not None:
                return adopted
            if conflict is not None:
                raise _failure(conflict, attempts=attempts)
            if not any(name in payload for name in entity.unique):
                # Nothing the service keeps unique is sent: were the lost create still to commit
                # (late, on a slow service), a second one would be a duplicate it cannot refuse.
                raise _failure(
                    last, attempts=attempts,
                    doing="creating: its answer was lost and it is not found under its key; not sent again, "
                    "since the service would not refuse a duplicate (run the apply again to converge)",
                )
            await asyncio.sleep(min(0.05 * 2**attempts, 2.0))
        assert last is not None
        raise _failure(last, attempts=attempts, doing=f"creating, after {attempts} attempts")

    async def _adopt(
        self, entity: EntityProfile, key: Mapping[str, Any], payload: dict[str, Any], attempts: int,
        unexplained: Conflict | None,
    ) -> tuple[str, int, bool, str | None] | None:
        """After a lost answer or a 409: the record under `key`, adopted, or None if there is none.

        A record found after a lost answer is adopted and updated if it differs; one met by a 409
        that no lost create of this run explains (`unexplained`) is adopted only when it already
        equals the payload (re-applying a plan after an interruption), never changed: that would
        be a change the plan did not show.
        """
        try:  # the client already retries a GET on transient failures
            found = await self._lookup(entity, key)
        except ApiError as error:
            raise _failure(error, attempts=attempts, doing="looking up a create whose answer was lost") from None
        if found is None:
            return None
        record_id = str(found["id"])
        patch = missing_changes(found, payload, entity)
        if patch and unexplained is not None:
            # The create met a record nobody in this run made: it appeared since the plan, and
            # changing it is a change the plan never showed.
            raise _failure(
                unexplained, attempts=attempts,
                doing="creating: a record with this key was created since the plan, with other "
                "values; run `loader plan` again to see the update",
            )
        if patch:
            attempts += 1
            try:
                await self.client.update(entity.name, record_id, patch)
            except ApiError as error:
                raise _failure(error, attempts=attempts, record_id=record_id) from None
        return record_id, attempts, True, _status_of(found, entity)

    async def _lookup(self, entity: EntityProfile, key: Mapping[str, Any]) -> dict[str, Any] | None:
        if entity.get_by_code and tuple(key) == ("code",):
            found = await self.client.get(entity.name, str(key["code"]))
            return found if found is not None and matches_key(found, key) else None
        candidates = await self.client.fetch_collection(entity.name, filters=filterable(key))
        matches = [c for c in candidates if matches_key(c, key)]
        return matches[0] if matches else None


def _status_of(record: Mapping[str, Any], entity: EntityProfile) -> str | None:
    if entity.status is None:
        return None
    value = record.get(entity.status.field)
    return str(value) if value is not None else entity.status.initial


CONFLICT_HIDDEN = (
    "the service refused it: a record with this key or a unique value already exists (HTTP 409); its message "
    "is hidden because this record's fields are personal data and it may name another person"
)


def _shown_message(failure: _Failure, record: RecordPlan) -> str:
    """The failure's message, unless it is a 409 about a record holding PII: the service's message
    names the existing record (a person, for applicants), so it is not repeated into results."""
    if failure.status == 409 and any(change.pii for change in record.changes):
        return CONFLICT_HIDDEN
    return failure.message


def _failure(error: ApiError, *, attempts: int, record_id: str | None = None, doing: str | None = None) -> _Failure:
    """A _Failure from an API error; `attempts` counts the writes sent, the failing one included."""
    message = error.service_message if isinstance(error, HttpError) else error.message
    if doing:
        message = f"{doing}: {message}"
    status = error.status if isinstance(error, HttpError) else None
    return _Failure(message, status=status, attempts=attempts, record_id=record_id)


async def apply_plan(
    plan: Plan,
    client: WriteClient,
    profile: Profile,
    options: ApplyOptions | None = None,
    *,
    stop: asyncio.Event | None = None,
    listener: ResultListener | None = None,
    environment: str | None = None,
) -> Results:
    """Apply `plan` through `client`; every record of the plan gets a RecordResult.

    Checks (errors without --partial, --max-changes, stale records) are the caller's: see
    `loader.apply.guards` and `loader.apply.stale`. Setting `stop` stops dispatching; records in
    flight finish, the rest are reported skipped and `Results.interrupted` is true.
    """
    options = options or ApplyOptions()
    stop = stop or asyncio.Event()
    started = _now()
    executor = _Executor(plan, client, profile, options, stop, listener)
    records = await executor.run()
    counts = getattr(client, "request_counts", {})
    return Results(
        environment=environment or plan.environment,
        env_name=plan.env_name,
        records=records,
        interrupted=stop.is_set(),
        started_at=started,
        finished_at=_now(),
        request_counts=dict(counts),
        block_sources={b.name: (b.source_file, b.sheet) for b in plan.blocks},
    )
