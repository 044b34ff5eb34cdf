"""The journal of one apply: a header, one line per write as it happens, counts at the end.

Each entry is one JSON line appended with a single write to a file opened for appending and not
buffered by Python, so an apply killed at any moment leaves every entry it had written, and at
worst a torn last line, which reading skips. The next command folds a journal left unfinished into
the snapshot (`loader.history.journal_reading.replay`). Personal values never reach the file: for an
entity with personal fields keys and ids are keyed tokens, "before" is a keyed digest and there is no "after"; for other
entities "before" is the value the service held before the write (what `loader revert` restores)
and "after" the value after it (the last-loaded value a conflict shows), where the apply has it.

Format 2 (this release) added "after", "formerly" (the key a renumbered record had before the
entry) and the `edited` entries; a format 1 journal reads as one whose fields have no "after".
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from loader.history.digests import Digester, Key, Written
from loader.history.files import create_new
from loader.history.journal_parts import MAX_PART_BYTES, apply_id_of, continued_line, part_header, part_path
from loader.history.journal_text import NO_VALUE, EntryText, Mark, json_text
from loader.history.lines import Edited, Owner
from loader.history.locking import lock_journal, release
from loader.history.overlay import Overlay
from loader.history.snapshot import Snapshot

FORMAT = 3
KINDS = ("create", "update", "adopt", "lost", "confirm", "edited", "release")
"""create: the loader made the record. update: it changed fields. adopt: a create whose answer was
lost, found live and taken as the loader's. lost: sent, the answer lost (the snapshot is not moved:
the next plan finds live equal to the sheet and W follows). confirm: no write, live found equal to
the sheet (W becomes live). edited: no write, fields found changed in the platform since the
loader's value, with who changed them and when (kept on the line until the loader's value is back).
release: no write, a block stopped managing the record (`on_dropped: release`): its marks are
forgotten, and the line with them when no other block's mark is left."""

WRITES = frozenset({"create", "update", "adopt", "lost"})


@dataclass(frozen=True)
class ApplyInfo:
    """Who applied what, where: the journal's header."""

    apply_id: str
    time: str
    environment: str
    plan_digest: str | None
    by: str | None
    renamed: tuple[tuple[Owner, Owner], ...] = ()  # (block, the name it had before: `formerly`) of its plan


class FieldWrite(NamedTuple):
    """One field an apply wrote (or confirmed): the value the service holds after (from its answer;
    `NO_VALUE` when the apply does not have it), the value before, and W when the plan computed it
    (a set keeping a platform's element edits). (A named tuple: an apply makes one per field it
    writes.)"""

    field: str
    owner: Owner
    after: Any = NO_VALUE
    before: Any = None
    as_set: bool = False
    written: Written | None = None


FieldValues = tuple[str, Owner, Any, Any, bool, Written | None]
"""A `FieldWrite`'s values as a plain tuple, in its order (what apply hands the writer)."""


@dataclass(frozen=True)
class JournalField:
    """One field of an entry: its owner, W, the value before and, where the journal kept it (not for
    personal fields, nor in a journal of format 1), the value after (`has_after`)."""

    owner: Owner
    written: Written
    before: Any = None
    after: Any = None
    has_after: bool = False


@dataclass(frozen=True)
class JournalEntry:
    """One line of a journal. `formerly`: the key token the record had before (it was renumbered);
    `edited`: per field, who first changed it in the platform and when (an `edited` entry)."""

    kind: str
    entity: str
    key: str
    live_id: str | None
    updated: tuple[int, str | None] | None = None
    fields: Mapping[str, JournalField] = field(default_factory=dict)
    formerly: str | None = None
    edited: Mapping[str, Edited] = field(default_factory=dict)
    released: Owner | None = None  # a `release` entry: the block that stopped managing the record


@dataclass(frozen=True)
class Journal:
    info: ApplyInfo
    entries: tuple[JournalEntry, ...]
    counts: Mapping[str, int] | None  # None: the apply did not finish

    @property
    def wrote(self) -> bool:
        return any(entry.kind in WRITES for entry in self.entries)


class JournalWriter:
    """Appends one apply's entries to its journal file as the apply goes, and keeps what folding
    them into the snapshot `base` makes of each record (`overlay`), so finishing reads nothing back."""

    def __init__(self, path: Path, info: ApplyInfo, digester: Digester, *, base: Snapshot | None = None,
                 max_part_bytes: int = MAX_PART_BYTES) -> None:
        self.path = path  # the first part (`loader.history.journal_parts`)
        self.info = info
        self._digester = digester
        self._counts: Counter[str] = Counter()
        self._service_users: set[str] = set()
        self._text = EntryText()
        self.overlay = Overlay(base if base is not None else Snapshot())
        self._max_part_bytes = max_part_bytes
        self._first: int | None = create_new(path)  # never a file already there, never through a symbolic link
        lock_journal(self._first)  # a running apply's: no other command folds it (loader.history.locking)
        self._fd: int | None = self._first  # the part written now
        self._part, self._part_bytes, self._part_entries = 1, 0, 0
        self.held_folder: int | None = None  # the history folder's lock, when `History.begin_apply` took it
        self._write(json_text({"journal": FORMAT, **_info_json(info)}) + "\n")

    @property
    def service_users(self) -> frozenset[str]:
        """The user ids that the answers to this apply's writes named as updater."""
        return frozenset(self._service_users)

    def folding(self) -> Folding:
        """What folding this journal into the snapshot needs (entries kept as they were written)."""
        return Folding(self.info, self.overlay, self._counts.total(), any(self._counts[k] for k in WRITES),
                       frozenset(self._service_users))

    def record(self, kind: str, entity: str, key: Key, live_id: str | None, fields: Iterable[FieldValues] = (),
               *, updated: tuple[int, str | None] | None = None, formerly: Key | None = None) -> None:
        """One create, update, adoption, lost answer or confirmation, appended at once. `fields`
        are `FieldWrite`s, or plain tuples of their values. `formerly`: the key the record had
        before this write (a renumbering: its line moves to `key`, the old key kept as former)."""
        if kind not in KINDS or kind in ("edited", "release"):
            raise ValueError(f"unknown journal entry kind {kind!r}")
        d = self._digester
        personal = d.is_personal(entity)
        key_token, digests = d.identity(entity, key)  # the entity and key hashed once for every field
        id_token = None if live_id is None else d.id_token(entity, live_id)
        former_token = None if formerly is None else d.key_token(entity, formerly)
        marks: dict[str, Mark] = {}
        value = digests.value
        for name, owner, after, before, as_set, written in fields:
            if written is None:
                written = digests.elements(name, after) if as_set else value(name, after)
            if personal:
                marks[name] = (owner, written, digests.written(name, before, as_set=as_set), NO_VALUE)
            else:
                marks[name] = (owner, written, before, after)
        self._append(self._text.line(kind, entity, key_token, id_token, updated, marks, personal, former_token))
        self._counts[kind] += 1
        if updated is not None and updated[1] is not None and kind in WRITES:
            self._service_users.add(updated[1])
        if kind != "lost":
            self.overlay.add(entity, key_token, id_token, updated, marks, formerly=former_token)

    def release(self, entity: str, key: Key, owner: Owner) -> None:
        """The block `owner` stops managing the record `key`: its marks go (and the line, when no
        other block's mark is left). Appended at once; nothing was written."""
        key_token = self._digester.key_token(entity, key)
        self._append(json_text({"entity": entity, "key": key_token, "kind": "release",
                                "owner": [owner.file, owner.block]}) + "\n")
        self._counts["release"] += 1
        self.overlay.add(entity, key_token, None, None, {}, released=owner)

    def edited(self, entity: str, key: Key, live_id: str, edits: Mapping[str, Edited]) -> None:
        """Fields found changed in the platform since the loader's value, with who changed each and
        when (the live record's `metadata.updated`); a field whose line already names its first
        change keeps it. Appended at once; nothing was written."""
        d = self._digester
        key_token, id_token = d.key_token(entity, key), d.id_token(entity, live_id)
        line = self.overlay.base.get(entity, key_token)
        if line is None:
            return  # no line: nothing to note them on
        # only the changes not noted yet: an apply meets a kept edit every cycle, the journal once
        edits = {name: stamp for name, stamp in edits.items()
                 if name in line.fields and line.fields[name].edited is None}
        if not edits:
            return
        edited = {name: [int(time), user] for name, (time, user) in sorted(edits.items())}
        self._append(json_text({"edited": edited, "entity": entity, "id": id_token, "key": key_token,
                                "kind": "edited"}) + "\n")
        self._counts["edited"] += 1
        self.overlay.add(entity, key_token, id_token, None, {}, edited=edits)

    def finish(self, counts: Mapping[str, int] | None = None) -> None:
        """Write the counts (this writer's per kind, with `counts` over them) and sync the file; it
        stays open (and locked) until `close`, so no other command takes it for a leftover meanwhile."""
        self._append(json_text({"end": {**dict(sorted(self._counts.items())), **dict(counts or {})}}) + "\n")
        assert self._fd is not None
        os.fsync(self._fd)

    def close(self) -> None:
        """Close the journal and let go of its lock and of the history folder's."""
        if self._fd is not None and self._fd != self._first:
            os.close(self._fd)
        if self._first is not None:
            os.close(self._first)
        self._fd = self._first = None
        release(self.held_folder)
        self.held_folder = None

    def _append(self, line: str) -> None:
        """An entry (or the end line) into the part written now, or into a new part when this one
        would grow past the part size with it (a part holds at least one entry)."""
        size = len(line.encode())
        if self._part_entries and (self._part_bytes + size + len(continued_line(self._part + 1))
                                   > self._max_part_bytes):
            self._next_part()
        self._write(line)
        self._part_entries += 1

    def _next_part(self) -> None:
        """Start the next part: made with its header first, then named at the end of this one, so a
        kill between the two leaves a journal that reads whole."""
        if self._fd is None:
            raise ValueError("the journal is closed")
        number = self._part + 1
        fd = create_new(part_path(self.path, number))
        header_bytes = _write_all(fd, part_header(apply_id_of(self.path), FORMAT, number))
        _write_all(self._fd, continued_line(number))
        os.fsync(self._fd)
        if self._fd != self._first:
            os.close(self._fd)
        self._fd, self._part, self._part_bytes, self._part_entries = fd, number, header_bytes, 0

    def _write(self, line: str) -> None:
        if self._fd is None:
            raise ValueError("the journal is closed")
        self._part_bytes += _write_all(self._fd, line)


def _write_all(fd: int, line: str) -> int:
    """Append `line` to the file `fd` with one write (the rest after a short one); its size in bytes."""
    data = line.encode()
    written = os.write(fd, data)
    while written < len(data):  # a short write (full disk, signal): the rest goes on
        written += os.write(fd, data[written:])
    return len(data)


@dataclass(frozen=True)
class Folding:
    """What folding one journal into the snapshot needs: whose it is, what each record it names
    becomes (`overlay`), how many entries it holds, whether it wrote, the service users it met."""

    info: ApplyInfo
    overlay: Overlay
    entries: int
    wrote: bool
    service_users: frozenset[str]


def _info_json(info: ApplyInfo) -> dict[str, Any]:
    return {"apply": info.apply_id, "time": info.time, "environment": info.environment,
            "plan_digest": info.plan_digest, "by": info.by} | (
        {"renamed": [[list(new), list(old)] for new, old in info.renamed]} if info.renamed else {})
