"""Stale detection for `apply --plan`: records changed in the service since the plan was made.

The plan remembers each updated record's live `metadata.updated.time`. Before applying, the
collections holding those records are listed again (list requests, never one GET per record);
a record whose time differs, or that is gone, is skipped with everything that depends on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from loader.live_records import updated_time
from loader.plan.model import Plan, RecordPlan


class ListClient(Protocol):
    async def fetch_collections(self, entities: list[str]) -> dict[str, list[dict[str, Any]]]: ...


def records_to_check(plan: Plan) -> tuple[RecordPlan, ...]:
    """Records the plan will change that exist live (updates and status steps)."""
    return tuple(r for r in plan.records() if r.live_id and r.has_changes and not r.blocked and not r.errors)


def _when(epoch_ms: Any) -> str:
    if isinstance(epoch_ms, (int, float)):
        return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="seconds")
    return str(epoch_ms)


def stale_records(records: Iterable[RecordPlan], live: Mapping[str, Iterable[Mapping[str, Any]]]) -> dict[str, str]:
    """ref -> why, for each of `records` whose live counterpart changed or disappeared (pure)."""
    by_id: dict[tuple[str, str], Mapping[str, Any]] = {}
    for entity, items in live.items():
        for item in items:
            by_id[(entity, str(item.get("id")))] = item
    stale: dict[str, str] = {}
    for record in records:
        if record.live_id is None:
            continue
        current = by_id.get((record.entity, record.live_id))
        if current is None:
            stale[record.ref] = f"stale: {record.entity} {record.live_id} is no longer in the service"
            continue
        now = updated_time(current)
        if record.live_updated_time is None:
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


async def find_stale(plan: Plan, client: ListClient) -> dict[str, str]:
    """ref -> why, for every record of `plan` that changed in the service since it was planned."""
    records = records_to_check(plan)
    entities = sorted({r.entity for r in records})
    if not entities:
        return {}
    live = await client.fetch_collections(entities)
    return stale_records(records, live)
