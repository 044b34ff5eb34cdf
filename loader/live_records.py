"""What the loader reads of a live record beyond its fields: when the service last updated it, and
by whom (the one reader of `metadata.updated`).

The plan remembers the time of each record it matches (`RecordPlan.live_updated_time`), the plan's
fetch keeps only it and the user's id of the metadata, `apply --plan` compares it again to find
stale records, and the history keeps (time, user id) of every record the loader wrote or saw.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


def updated_time(record: Mapping[str, Any]) -> Any:
    """The record's `metadata.updated.time` (epoch milliseconds, as the service gives it), None when
    it has none."""
    metadata = record.get("metadata")
    if type(metadata) is UpdatedStamp:  # a fetched record's (LiveSlimmer)
        return metadata.time
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


class UpdatedStamp(Mapping[str, Any]):
    """A live record's `metadata` as a plan keeps it: `{"updated": {"time": t, "user": {"id": u}}}`
    (no "user" when the service named none by id), read like that dict and equal to it, held as two
    slots: the three dicts of it were more than a third of the memory a fetched record took."""

    __slots__ = ("time", "user")

    def __init__(self, time: Any, user: str | None):
        self.time = time
        self.user = user

    def __getitem__(self, name: str) -> dict[str, Any]:
        if name != "updated":
            raise KeyError(name)
        return {"time": self.time} if self.user is None else {"time": self.time, "user": {"id": self.user}}

    def __iter__(self) -> Iterator[str]:
        return iter(("updated",))

    def __len__(self) -> int:
        return 1

    def __repr__(self) -> str:
        return repr(dict(self))


class LiveSlimmer:
    """Makes the records of one collection lean as they come in (each record in place):

    - `metadata` keeps only `updated`'s time and user id (`UpdatedStamp`): who created the record
      and the updater's names a plan never reads;
    - a reference object (`{"id": ...}`) is the one object of every record naming that id.

    Shared values are read, never changed: a plan copies what it changes (`loader.plan.fields`).
    """

    def __init__(self) -> None:
        self._references: dict[str, dict[str, Any]] = {}
        self._users: dict[str, str] = {}

    def slim(self, record: dict[str, Any]) -> dict[str, Any]:
        """`record`, its values replaced as the class says (the same values, held once)."""
        shared: list[tuple[str, Any]] = []
        for name, value in record.items():
            if name == "metadata":
                if isinstance(value, dict):
                    shared.append((name, self._stamp(value, record)))
                continue
            if type(value) is dict and len(value) == 1 and type(value.get("id")) is str:
                kept = self._references.setdefault(value["id"], value)
                if kept is not value:
                    shared.append((name, kept))
        for name, value in shared:
            record[name] = value
        return record

    def _stamp(self, metadata: dict[str, Any], record: Mapping[str, Any]) -> UpdatedStamp:
        updated = metadata.get("updated")
        user = updated.get("user") if isinstance(updated, dict) else None
        user_id = user.get("id") if isinstance(user, dict) else None
        if isinstance(user_id, str):
            user_id = self._users.setdefault(user_id, user_id)
        else:
            user_id = None
        return UpdatedStamp(updated_time(record), user_id)
