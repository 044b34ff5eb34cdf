"""The head of a history: which history it is, how far it has come, and whose key opens it.

    lineage            a random id made when the history starts (a reset starts another)
    serial             moves by one with every apply that wrote something
    last_apply         the id of that apply
    service_user_ids   the users the service named for the loader's own writes (learned from the
                       answers; `service_user_ids:` in an environment adds more)
    key_fingerprint    the history key's fingerprint; wrapped_data_key the data key under it
    lines              per entity, how many lines the snapshot holds (a line lost in a bad merge
                       is told from a record never loaded: `loader.history.integrity`)
    renamed            per block an apply loaded under a new name, the name it had before (its
                       `formerly:`): ownership follows the whole chain of names
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from loader.history.files import MAX_HEAD_BYTES, damaged, read_bounded
from loader.history.lines import Owner

FORMAT = 3  # 2: snapshot lines with former keys and first platform changes, journals with values after;
# 3: journals split into parts, their lines naming a block once


@dataclass(frozen=True)
class Head:
    lineage: str
    serial: int = 0
    last_apply: str | None = None
    service_user_ids: tuple[str, ...] = ()
    key_fingerprint: str | None = None
    wrapped_data_key: str | None = None
    lines: tuple[tuple[str, int], ...] | None = None  # None: a head written before it counted them
    renamed: tuple[tuple[Owner, Owner], ...] = ()  # (block, the block it was before), as applies named them

    def with_renamed(self, renamed: tuple[tuple[Owner, Owner], ...]) -> Head:
        """The head also naming the renames `renamed` (a block's latest `formerly` replaces an earlier one)."""
        known = dict(self.renamed) | {new: old for new, old in renamed if new != old}
        return replace(self, renamed=tuple(sorted(known.items())))

    def former_names(self, owners: frozenset[Owner]) -> frozenset[Owner]:
        """`owners` with every name their blocks had before, following the renames back to the first."""
        found, todo = set(owners), list(owners)
        previous = dict(self.renamed)
        while todo:
            old = previous.get(todo.pop())
            if old is not None and old not in found:
                found.add(old)
                todo.append(old)
        return frozenset(found)

    def counted(self, counts: Mapping[str, int]) -> Head:
        """The head naming the snapshot's lines per entity (`counts`)."""
        return replace(self, lines=tuple(sorted((e, n) for e, n in counts.items() if n)))

    def moved(self, apply_id: str, service_users: frozenset[str] = frozenset()) -> Head:
        """The head after the apply `apply_id` wrote something."""
        return replace(self, serial=self.serial + 1, last_apply=apply_id,
                       service_user_ids=tuple(sorted(set(self.service_user_ids) | service_users)))


def new_head() -> Head:
    return Head(lineage=secrets.token_hex(8))


def head_json(head: Head) -> bytes:
    data: dict[str, object] = {
        "format": FORMAT, "lineage": head.lineage, "serial": head.serial, "last_apply": head.last_apply,
        "service_user_ids": list(head.service_user_ids), "key_fingerprint": head.key_fingerprint,
        "wrapped_data_key": head.wrapped_data_key}
    if head.lines is not None:
        data["lines"] = dict(head.lines)
    if head.renamed:
        data["renamed"] = [[list(new), list(old)] for new, old in head.renamed]
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()


def read_head(path: Path) -> Head | None:
    """The head in `path`, or None when the history has not started. A head that is not a regular
    file, cannot be read as a head, or was written by a newer loader is a `HistoryError`."""
    data = read_bounded(path, MAX_HEAD_BYTES)
    if data is None:
        return None
    try:
        fields = json.loads(data)
        if not isinstance(fields, dict):
            raise TypeError("not a JSON object")
        written = fields.get("format", FORMAT)
        if not isinstance(written, int) or written < 1:
            raise TypeError(f"format {written!r}")
        if written > FORMAT:
            raise damaged(f"was written by a newer loader (history format {written}; this loader reads "
                          f"format {FORMAT})", path, hint="upgrade the loader (`pip install -U` it) and run it again")
        return _head_of(fields)
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as error:
        raise damaged(f"cannot be read as the history's head ({type(error).__name__}: {error})", path) from None


def _head_of(data: dict[str, Any]) -> Head:
    lineage, serial, lines = data["lineage"], data["serial"], data.get("lines")
    if not isinstance(lineage, str) or not lineage or type(serial) is not int or serial < 0:
        raise TypeError("`lineage` must be text and `serial` a whole number")
    for name in ("last_apply", "key_fingerprint", "wrapped_data_key"):
        if not isinstance(data.get(name), str | None):
            raise TypeError(f"`{name}` must be text")
    users = data.get("service_user_ids", [])
    if not isinstance(users, list) or not isinstance(lines, dict | None):
        raise TypeError("`service_user_ids` must be a list and `lines` an object")
    counted = None if lines is None else tuple(sorted((str(e), _count(n)) for e, n in lines.items()))
    return Head(lineage, serial, data.get("last_apply"), tuple(str(u) for u in users), data.get("key_fingerprint"),
                data.get("wrapped_data_key"), counted, _renamed(data.get("renamed", [])))


def _renamed(value: object) -> tuple[tuple[Owner, Owner], ...]:
    if not isinstance(value, list):
        raise TypeError("`renamed` must be a list")
    return tuple((_owner(new), _owner(old)) for new, old in value)


def _owner(value: object) -> Owner:
    if not isinstance(value, list) or len(value) != 2 or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{value!r} is not a block [file, block]")
    return Owner(value[0], value[1])


def _count(value: object) -> int:
    if type(value) is not int or value < 0:
        raise TypeError(f"a line count {value!r} is not a whole number")
    return value
