"""The head of a history: which history it is, how far it has come, and whose key opens it.

    lineage            a random id made when the history starts (a reset starts another)
    serial             moves by one with every apply that wrote something
    last_apply         the id of that apply
    service_user_ids   the users the service named for the loader's own writes (learned from the
                       answers; `service_user_ids:` in an environment adds more)
    key_fingerprint    the history key's fingerprint; wrapped_data_key the data key under it
    lines              per entity, how many lines the snapshot holds (a line lost in a bad merge
                       is told from a record never loaded: `loader.history.integrity`)
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from loader.history.errors import HistoryError

FORMAT = 2  # 2: snapshot lines with former keys and first platform changes, journals with values after


@dataclass(frozen=True)
class Head:
    lineage: str
    serial: int = 0
    last_apply: str | None = None
    service_user_ids: tuple[str, ...] = ()
    key_fingerprint: str | None = None
    wrapped_data_key: str | None = None
    lines: tuple[tuple[str, int], ...] | None = None  # None: a head written before it counted them

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
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()


def read_head(path: Path) -> Head | None:
    """The head in `path`, or None when the history has not started."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_bytes())
        lines = data.get("lines")
        return Head(str(data["lineage"]), int(data["serial"]), data.get("last_apply"),
                    tuple(str(u) for u in data.get("service_user_ids", ())), data.get("key_fingerprint"),
                    data.get("wrapped_data_key"),
                    None if lines is None else tuple(sorted((str(e), int(n)) for e, n in lines.items())))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise HistoryError(f"the history's head cannot be read ({error})", where=str(path),
                           hint="restore it from git, or run `loader history reset`") from None
