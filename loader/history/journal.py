"""The journal of one apply: a header, one line per write as it happens, counts at the end.

Each entry is one JSON line appended with a single write to a file opened for appending and not
buffered by Python, so an apply killed at any moment leaves every entry it had written, and at
worst a torn last line, which reading skips. The next command folds a journal left unfinished into
the snapshot (`fold`). Personal values never reach the file: for an entity with personal fields
keys and ids are keyed tokens and "before" is a keyed digest; for other entities "before" is the
value the service held before the write (what `loader revert` restores).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loader.history.digests import Digester, Key, Written
from loader.history.lines import FieldMark, HistoryLine, Owner
from loader.history.snapshot import Snapshot

KINDS = ("create", "update", "adopt", "lost", "confirm")
"""create: the loader made the record. update: it changed fields. adopt: a create whose answer was
lost, found live and taken as the loader's. lost: sent, the answer lost (the snapshot is not moved:
the next plan finds live equal to the sheet and W follows). confirm: no write, live found equal to
the sheet (W becomes live)."""

WRITES = frozenset({"create", "update", "adopt", "lost"})


@dataclass(frozen=True)
class ApplyInfo:
    """Who applied what, where: the journal's header."""

    apply_id: str
    time: str
    environment: str
    plan_digest: str | None
    by: str | None


@dataclass(frozen=True)
class FieldWrite:
    """One field an apply wrote (or confirmed): the value the service holds after (from its answer),
    the value before, and W when the plan computed it (a set keeping a platform's element edits)."""

    field: str
    owner: Owner
    after: Any = None
    before: Any = None
    as_set: bool = False
    written: Written | None = None


@dataclass(frozen=True)
class JournalField:
    owner: Owner
    written: Written
    before: Any = None


@dataclass(frozen=True)
class JournalEntry:
    kind: str
    entity: str
    key: str
    live_id: str | None
    updated: tuple[int, str | None] | None = None
    fields: Mapping[str, JournalField] = field(default_factory=dict)


@dataclass(frozen=True)
class Journal:
    info: ApplyInfo
    entries: tuple[JournalEntry, ...]
    counts: Mapping[str, int] | None  # None: the apply did not finish

    @property
    def wrote(self) -> bool:
        return any(entry.kind in WRITES for entry in self.entries)


class JournalWriter:
    """Appends one apply's entries to its journal file as the apply goes."""

    def __init__(self, path: Path, info: ApplyInfo, digester: Digester) -> None:
        self.path = path
        self.info = info
        self._digester = digester
        self._counts: Counter[str] = Counter()
        self._service_users: set[str] = set()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._append({"journal": 1, **_info_json(info)})

    @property
    def service_users(self) -> frozenset[str]:
        """The user ids that the answers to this apply's writes named as updater."""
        return frozenset(self._service_users)

    def record(self, kind: str, entity: str, key: Key, live_id: str | None, fields: Iterable[FieldWrite] = (),
               *, updated: tuple[int, str | None] | None = None) -> None:
        """One create, update, adoption, lost answer or confirmation, appended at once."""
        if kind not in KINDS:
            raise ValueError(f"unknown journal entry kind {kind!r}")
        d = self._digester
        personal = d.is_personal(entity)
        entry: dict[str, Any] = {"kind": kind, "entity": entity, "key": d.key_token(entity, key),
                                 "id": None if live_id is None else d.id_token(entity, live_id)}
        if updated is not None:
            entry["updated"] = [updated[0], updated[1]]
            if updated[1] is not None and kind in WRITES:
                self._service_users.add(updated[1])
        marks = {}
        digests = d.record(entity, key)  # the entity and key hashed once for every field
        for f in fields:
            written = f.written if f.written is not None else digests.written(f.field, f.after, as_set=f.as_set)
            before = digests.written(f.field, f.before, as_set=f.as_set) if personal else f.before
            marks[f.field] = {"owner": [f.owner.file, f.owner.block], "w": _written_json(written),
                              "before": _written_json(before) if personal else before}
        entry["fields"] = marks
        self._append(entry)
        self._counts[kind] += 1

    def finish(self, counts: Mapping[str, int] | None = None) -> None:
        """Write the counts (this writer's per kind, with `counts` over them) and close the file."""
        self._append({"end": {**dict(sorted(self._counts.items())), **dict(counts or {})}})
        assert self._fd is not None
        os.fsync(self._fd)
        self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _append(self, entry: Mapping[str, Any]) -> None:
        if self._fd is None:
            raise ValueError("the journal is closed")
        line = json.dumps(entry, ensure_ascii=False, sort_keys=True, default=str, separators=(",", ":")) + "\n"
        data = line.encode()
        written = os.write(self._fd, data)
        while written < len(data):  # a short write (full disk, signal): the rest goes on
            written += os.write(self._fd, data[written:])


def _info_json(info: ApplyInfo) -> dict[str, Any]:
    return {"apply": info.apply_id, "time": info.time, "environment": info.environment,
            "plan_digest": info.plan_digest, "by": info.by}


def _written_json(written: Written) -> Any:
    return written if isinstance(written, str) else sorted(written)


def _written_from(value: Any) -> Written:
    return value if isinstance(value, str) else frozenset(str(v) for v in value)


def read_journal(path: Path) -> Journal:
    """The journal in `path`; a torn last line (a killed apply) is skipped."""
    info: ApplyInfo | None = None
    entries: list[JournalEntry] = []
    counts: Mapping[str, int] | None = None
    for row in path.read_bytes().split(b"\n"):
        try:
            item = json.loads(row)
        except ValueError:
            continue
        if "journal" in item:
            info = ApplyInfo(item["apply"], item["time"], item["environment"], item["plan_digest"], item["by"])
        elif "end" in item:
            counts = item["end"]
        else:
            entries.append(entry_from(item))
    if info is None:
        info = ApplyInfo(path.name.split(".")[0], "", "", None, None)
    return Journal(info, tuple(entries), counts)


def entry_from(item: Mapping[str, Any]) -> JournalEntry:
    """One journal line's entry, from its parsed JSON."""
    updated = item.get("updated")
    fields = {name: JournalField(Owner(*f["owner"]), _written_from(f["w"]), f.get("before"))
              for name, f in item.get("fields", {}).items()}
    return JournalEntry(item["kind"], item["entity"], item["key"], item.get("id"),
                        (int(updated[0]), updated[1]) if updated else None, fields)


def fold(snapshot: Snapshot, entries: Sequence[JournalEntry]) -> Snapshot:
    """The snapshot with a journal's entries applied in order ("lost" entries change nothing)."""
    changed: dict[str, dict[str, HistoryLine]] = {}
    for entry in entries:
        if entry.kind == "lost":
            continue
        lines = changed.setdefault(entry.entity, {})
        line = lines.get(entry.key) or snapshot.get(entry.entity, entry.key)
        if line is None:
            line = HistoryLine(entry.key, entry.live_id or "")
        time, user = entry.updated if entry.updated else (line.updated_time, line.updated_user)
        marks = {name: FieldMark(f.owner, f.written) for name, f in entry.fields.items()}
        lines[entry.key] = HistoryLine(entry.key, entry.live_id or line.live_id, time, user,
                                       {**line.fields, **marks})
    for entity, lines in sorted(changed.items()):
        snapshot = snapshot.with_lines(entity, lines.values())
    return snapshot


TAIL_BYTES = 65536


def read_journal_summary(path: Path) -> Journal:
    """The journal in `path` with its header and counts but no entries (read whole when it has no
    counts: an interrupted apply's, whose entries are counted instead)."""
    with path.open("rb") as handle:
        first = handle.readline()
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - TAIL_BYTES))
        last = handle.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    try:
        header, end = json.loads(first), json.loads(last)
    except ValueError:
        return read_journal(path)
    if not isinstance(header, dict) or "journal" not in header or not isinstance(end, dict) or "end" not in end:
        return read_journal(path)
    info = ApplyInfo(header["apply"], header["time"], header["environment"], header["plan_digest"], header["by"])
    return Journal(info, (), end["end"])
