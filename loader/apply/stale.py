"""Stale detection for `apply --plan`: records changed in the service since the plan was made.

The plan remembers each updated record's live `metadata.updated.time`. Before one of those records
is written, the collections holding them are listed again (list requests, a page at a time,
keeping only the update times of the records checked); a record whose time differs, or that is
gone, is skipped with everything that depends on it. A record the listing did not show is asked
for by its id before it is called gone (the apply writes while the check runs: a listing paged
while records are created could miss one).

The check runs while the apply writes (`start_stale_check`): the records it checks, and those
referring to them, wait for its answer (`loader.apply.held`); every other record goes ahead.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from loader.errors import ProfileError
from loader.live_records import updated_time
from loader.plan.model import Plan, RecordPlan


class ListClient(Protocol):
    def iter_collection(self, entity: str) -> AsyncIterator[dict[str, Any]]: ...

    async def get(self, entity: str, id_or_code: str) -> dict[str, Any] | None: ...


@dataclass(frozen=True)
class StaleCheck:
    """A saved plan's stale check under way: the refs it checks, and its answer to come (ref -> why,
    for those to skip)."""

    checked: frozenset[str]
    answer: asyncio.Task[dict[str, str]]


def records_to_check(plan: Plan) -> tuple[RecordPlan, ...]:
    """Records the plan will change that exist live (updates and status steps)."""
    return tuple(r for r in plan.records() if to_check(r))


def to_check(record: RecordPlan) -> bool:
    """Whether the check looks at `record`: one the plan will change that exists live."""
    return bool(record.live_id and record.has_changes and not record.blocked and not record.errors)


def _when(epoch_ms: Any) -> str:
    if isinstance(epoch_ms, (int, float)):
        return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="seconds")
    return str(epoch_ms)


_GONE = object()  # no live record has the id


def stale_records(records: Iterable[RecordPlan], live: Mapping[str, Iterable[Mapping[str, Any]]]) -> dict[str, str]:
    """ref -> why, for each of `records` whose live counterpart changed or disappeared (pure)."""
    times: dict[tuple[str, str], Any] = {}
    for entity, items in live.items():
        for item in items:
            times[(entity, str(item.get("id")))] = updated_time(item)
    return _stale(records, times)


def _stale(records: Iterable[RecordPlan], times: Mapping[tuple[str, str], Any]) -> dict[str, str]:
    stale: dict[str, str] = {}
    for record in records:
        if record.live_id is None:
            continue
        now = times.get((record.entity, record.live_id), _GONE)
        if now is _GONE:
            stale[record.ref] = f"stale: {record.entity} {record.live_id} is no longer in the service"
        elif record.live_updated_time is None:
            stale[record.ref] = (
                "stale: cannot tell whether it changed since the plan (the plan saw no update time for it); "
                "run `loader apply` with the mapping files to plan and apply in one go"
            )
        elif now != record.live_updated_time:
            stale[record.ref] = (
                f"stale: changed in the service since the plan was made (updated {_when(now)}, "
                f"plan saw {_when(record.live_updated_time)}); re-run `loader plan` to review it"
            )
    return stale


def start_stale_check(plan: Plan, client: ListClient) -> StaleCheck | None:
    """`find_stale` started as a task of the running loop (None: the plan updates no live record)."""
    records = records_to_check(plan)
    if not records:
        return None
    return StaleCheck(frozenset(r.ref for r in records), asyncio.create_task(_find_stale(records, client)))


def start_stale_check_later(plan: Awaitable[Plan], client: ListClient) -> StaleCheck:
    """The check of a plan whose records are read while it is applied: started now, it waits for
    the whole `plan`; the records it checks are learnt as they arrive (`HeldRecords.take`)."""

    async def check() -> dict[str, str]:
        records = records_to_check(await plan)
        return await _find_stale(records, client) if records else {}

    return StaleCheck(frozenset(), asyncio.create_task(check()))


async def _find_stale(records: tuple[RecordPlan, ...], client: ListClient) -> dict[str, str]:
    wanted = {(r.entity, r.live_id) for r in records if r.live_id is not None}
    times: dict[tuple[str, str], Any] = {}

    async def listed(entity: str) -> None:
        async for item in client.iter_collection(entity):
            found = (entity, str(item.get("id")))
            if found in wanted:
                times[found] = updated_time(item)

    entities = sorted({entity for entity, _ in wanted})
    async with asyncio.TaskGroup() as group:
        for entity in entities:
            group.create_task(listed(entity))
    for entity, live_id in sorted(wanted - times.keys()):
        try:
            item = await client.get(entity, live_id)
        except ProfileError:  # the profile reads no single record of this entity: gone, as listed
            continue
        if item is not None:
            times[(entity, live_id)] = updated_time(item)
    return _stale(records, times)
