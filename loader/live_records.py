"""What the loader reads of a live record beyond its fields: when the service last updated it, and
by whom (the one reader of `metadata.updated`).

The plan remembers the time of each record it matches (`RecordPlan.live_updated_time`), the plan's
fetch keeps only it and the user's id of the metadata, `apply --plan` compares it again to find
stale records, and the history keeps (time, user id) of every record the loader wrote or saw.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def updated_time(record: Mapping[str, Any]) -> Any:
    """The record's `metadata.updated.time` (epoch milliseconds, as the service gives it), None when
    it has none."""
    metadata = record.get("metadata")
    if type(metadata) is not dict and not isinstance(metadata, Mapping):  # a dict (every live record's) checked first
        return None
    updated = metadata.get("updated")
    if type(updated) is not dict and not isinstance(updated, Mapping):
        return None
    return updated.get("time")


def updated_user(record: Mapping[str, Any] | None) -> str | None:
    """The id of the user who last updated the record (the service may give the user as an object:
    its id alone, never a name or an e-mail), None when it names none."""
    # `type(...) is dict` first: every answer is made of dicts, and a Mapping check costs more
    metadata = record.get("metadata") if type(record) is dict or isinstance(record, Mapping) else None
    updated = metadata.get("updated") if type(metadata) is dict or isinstance(metadata, Mapping) else None
    user = updated.get("user") if type(updated) is dict or isinstance(updated, Mapping) else None
    if type(user) is dict or isinstance(user, Mapping):
        user = user.get("id")
    return None if user is None else str(user)


def updated_stamp(record: Mapping[str, Any] | None) -> tuple[int, str | None] | None:
    """(`metadata.updated.time` in epoch milliseconds, the user's id), None without a time."""
    time = updated_time(record) if type(record) is dict or isinstance(record, Mapping) else None
    if type(time) is not int and (not isinstance(time, int | float) or isinstance(time, bool)):
        return None
    return int(time), updated_user(record)
