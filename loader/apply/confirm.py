"""An update whose outcome is unknown when its retries run out is looked up before it fails.

A PATCH retried until its attempts ran out may still have been applied: one attempt's answer was
lost after the service committed it (a 5xx or no answer at all), and the attempts after it met
503s or 429s. As a lost create is looked up under its key, such an update is looked up by its id:
when the live record holds every field as it was sent, the update is done; else it failed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from loader.api.errors import ApiError, NoAnswer, OutcomeUnknown, RateLimited, ServerError
from loader.apply.payloads import missing_changes
from loader.errors import LoaderError
from loader.profile import EntityProfile

GetRecord = Callable[[str, str], Awaitable[dict[str, Any] | None]]

# What may hide a committed write: an answer lost after it was sent, or retries that ran out on
# failures that say nothing of an earlier attempt (a 503, a 429).
_UNKNOWN = (ServerError, NoAnswer, OutcomeUnknown, RateLimited)


def outcome_unknown(error: ApiError) -> bool:
    """Whether the update that raised `error` may have been applied all the same."""
    return isinstance(error, _UNKNOWN)


async def update_landed(
    get: GetRecord, entity: EntityProfile, record_id: str, payload: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Record `record_id` as read now (one GET by id) when it holds every field of `payload`: the
    update landed, and the record stands in for its lost answer (its `metadata.updated` stamp is
    what the journal keeps, as for an adopted create).

    None when it does not, is not found, or cannot be read (the update then fails as it would
    have without the look-up).
    """
    try:
        live = await get(entity.name, record_id)
    except LoaderError:
        return None
    return live if live is not None and live_holds(live, payload, entity) else None


def live_holds(live: Mapping[str, Any], payload: Mapping[str, Any], entity: EntityProfile) -> bool:
    """Whether `live` has every field of `payload` as sent (the status field too, unlike an adoption)."""
    status = entity.status.field if entity.status is not None else None
    if status is not None and status in payload and live.get(status) != payload[status]:
        return False
    rest = {name: value for name, value in payload.items() if name != status}
    return not missing_changes(live, rest, entity)
