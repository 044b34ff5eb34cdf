"""A history folder: open it, read what the loader wrote, journal an apply, fold, move the head.

    <folder>/head.json              lineage, serial, last apply, service users, key fingerprint
    <folder>/snapshot/<entity>.tsv  the snapshot (snapshot.py)
    <folder>/journal/<id>.jsonl     one journal per apply; `<id>.open.jsonl` while it is written;
                                    `<id>.002.jsonl`... its further parts (journal_parts.py)

Nothing is written until an apply records something: a history starts with its first write.
"""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Iterable, Mapping, Set
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loader.history import keys
from loader.history.digests import Digester, Key
from loader.history.errors import HistoryError, missing_key, wrong_key
from loader.history.files import damaged, regular_files, write_atomically
from loader.history.head import Head, head_json, new_head, read_head
from loader.history.integrity import refuse_damaged_files, refuse_lost_lines
from loader.history.interrupted import Interrupted, interrupted_applies
from loader.history.journal import (
    ApplyInfo,
    Folding,
    Journal,
    JournalWriter,
)
from loader.history.journal_parts import MAX_PART_BYTES, is_later_part
from loader.history.journal_reading import read_journal, replay
from loader.history.last_values import newest_values
from loader.history.lines import HistoryLine, Owner
from loader.history.locking import being_written, hold_folder, release
from loader.history.merging import folded, write_entities
from loader.history.snapshot import Snapshot
from loader.history.snapshot_files import read_snapshot

HEAD = "head.json"
SNAPSHOT = "snapshot"
JOURNALS = "journal"
OPEN_SUFFIX = ".open.jsonl"
DONE_SUFFIX = ".jsonl"


class History:
    """One environment's history, as opened. Use `History.open`."""

    def __init__(self, folder: Path, head: Head, started: bool, digester: Digester, snapshot: Snapshot,
                 history_key: bytes | None, *, max_file_bytes: int | None = None) -> None:
        self.folder = folder
        self.head = head
        self.started = started
        self.digester = digester
        self.snapshot = snapshot
        self._history_key = history_key
        self._max_file_bytes = max_file_bytes
        # Applies that were interrupted (their journals, folded, have no end line), oldest first,
        # with when the next apply began: what the loader's own user wrote meanwhile is theirs.
        self.interrupted_applies: tuple[Interrupted, ...] = ()

    @classmethod
    def open(cls, folder: Path, *, history_key: bytes | None = None, key_variable: str | None = None,
             personal: Iterable[str] = (), fold_leftovers: bool = True,
             max_file_bytes: int | None = None) -> History:
        """The history in `folder` (empty when it has not started). `personal` names the entities with
        any `pii: true` field; they need `history_key`. A key that is not the history's is refused
        before anything is read; a journal an interrupted apply left is folded in first."""
        personal = frozenset(personal)
        stored = read_head(folder / HEAD)
        head = stored or new_head()
        if stored is not None and stored.key_fingerprint is not None:
            if history_key is None:
                raise missing_key(key_variable, str(folder / HEAD))
            if keys.fingerprint(history_key, stored.lineage) != stored.key_fingerprint:
                raise wrong_key(stored.key_fingerprint, key_variable, str(folder / HEAD))
            assert stored.wrapped_data_key is not None
            data_key: bytes | None = keys.unwrap(stored.wrapped_data_key, history_key, stored.lineage)
        elif history_key is not None:  # a history starting now, or one that had no key till now
            data_key = keys.new_data_key()
            head = replace(head, key_fingerprint=keys.fingerprint(history_key, head.lineage),
                           wrapped_data_key=keys.wrap(data_key, history_key, head.lineage))
        elif personal:
            raise missing_key(key_variable, str(folder))
        else:
            data_key = None
        done = finished_journals(folder)  # each a regular file (loader.history.files), as are the open ones
        refuse_damaged_files(folder, folder / HEAD, stored, folder / SNAPSHOT, done)
        snapshot = read_snapshot(folder / SNAPSHOT)
        if not regular_files(folder / JOURNALS, f"*{OPEN_SUFFIX}"):  # else the snapshot may be ahead of the head
            refuse_lost_lines(folder, folder / HEAD, stored, folder / SNAPSHOT, snapshot)
        history = cls(folder, head, stored is not None, Digester(personal, data_key), snapshot, history_key,
                      max_file_bytes=max_file_bytes)
        if fold_leftovers:
            history.fold_leftovers()
        history.interrupted_applies = interrupted_applies(finished_journals(folder))
        return history

    def state(self) -> str:
        """What changes whenever a line may have: the lineage, the serial and the newest journal
        (an apply that only confirmed fields, or a baseline, writes one without moving the serial)."""
        journals = [p.name for p in finished_journals(self.folder)]
        newest = journals[-1].removesuffix(DONE_SUFFIX) if journals else "-"
        return f"{self.head.lineage}/{self.head.serial}/{newest}"

    @property
    def interrupted(self) -> tuple[ApplyInfo, ...]:
        """The applies that were interrupted, oldest first."""
        return tuple(found.info for found in self.interrupted_applies)

    def line(self, entity: str, key: Key) -> HistoryLine | None:
        """The history line of the record `key` (its key fields' values) of `entity`."""
        return self.snapshot.get(entity, self.digester.key_token(entity, key))

    def line_by_id(self, entity: str, live_id: str) -> HistoryLine | None:
        """The history line of the record the service knows as `live_id`."""
        key = self.snapshot.key_for_id(entity, self.digester.id_token(entity, live_id))
        return None if key is None else self.snapshot.get(entity, key)

    def missing_ids(self, entity: str, live_ids: Iterable[str]) -> tuple[int, int]:
        """(ids the history recorded for `entity`, how many of them are not in `live_ids`): give
        every id of a full fetch of the collection, then ask `plan.three_way.is_another_database`."""
        recorded = self.snapshot.id_tokens(entity)
        live = {self.digester.id_token(entity, live_id) for live_id in live_ids}
        return len(recorded), len(recorded - live)

    def own_users(self, configured: Iterable[str] = ()) -> frozenset[str]:
        """The service user ids of the loader's own writes: learned, and `service_user_ids:` given."""
        return frozenset(self.head.service_user_ids) | frozenset(configured)

    def begin_apply(self, environment: str, *, plan_digest: str | None, by: str | None,
                    apply_id: str | None = None, time: datetime | None = None,
                    renamed: tuple[tuple[Owner, Owner], ...] = ()) -> JournalWriter:
        """Start the journal of an apply; record its writes on the writer, then `finish_apply`.
        `renamed`: its plan's blocks loaded under a new name, each with the name it had before
        (`formerly`), kept in the head so ownership follows the whole chain of names."""
        moment = time or datetime.now(UTC)
        # Milliseconds in the id: journals sort by their names, so two applies within a second keep their order.
        apply_id = apply_id or f"{moment:%Y%m%dT%H%M%S}{moment.microsecond // 1000:03d}Z-{secrets.token_hex(3)}"
        info = ApplyInfo(apply_id, moment.isoformat(timespec="seconds"), environment, plan_digest, by, renamed)
        held = hold_folder(self.folder)  # HistoryError while another apply writes this history
        try:
            writer = JournalWriter(self.folder / JOURNALS / f"{apply_id}{OPEN_SUFFIX}", info, self.digester,
                                   base=self.snapshot, max_part_bytes=self._max_file_bytes or MAX_PART_BYTES)
        except BaseException:
            release(held)
            raise
        writer.held_folder = held
        return writer

    def finish_apply(self, writer: JournalWriter, counts: Mapping[str, int] | None = None) -> Head:
        """End an apply: counts written, the journal folded into the snapshot, the head moved when
        it wrote something. An apply that recorded nothing leaves no trace. The writer is closed, its
        locks let go of."""
        try:
            writer.finish(counts)
            if writer.overlay.base is self.snapshot:
                return self._complete(writer.path, writer.folding())
            return self._complete(writer.path, replay(writer.path, self.snapshot))  # the snapshot moved meanwhile
        finally:
            writer.close()

    def leftovers(self) -> list[Path]:
        """Journals of applies that did not finish (killed, crashed), oldest first; not those of an
        apply still running (its journal locked: loader.history.locking)."""
        return [p for p in regular_files(self.folder / JOURNALS, f"*{OPEN_SUFFIX}") if not being_written(p)]

    def fold_leftovers(self) -> list[str]:
        """Fold every unfinished journal into the snapshot; the ids of the applies folded."""
        folded = []
        for path in self.leftovers():
            folded.append(path.name.removesuffix(OPEN_SUFFIX))
            self._complete(path, replay(path, self.snapshot), interrupted=True)
        return folded

    def journals(self) -> list[Journal]:
        """The journals of finished applies, oldest first."""
        return [read_journal(path) for path in finished_journals(self.folder)]

    def last_values(self, wanted: Set[tuple[str, str, str]]) -> dict[tuple[str, str, str], Any]:
        """Per (entity, key token, field) of `wanted`, the value the loader last left in it, as the
        newest journal that kept one says (absent where none did: see `loader.history.last_values`)."""
        return newest_values(finished_journals(self.folder), wanted)

    def reset(self) -> History:
        """Forget everything (the history described another database); the next write starts a new
        lineage under the same key. Refused while an apply writes this history (its writes would
        follow into a history that no longer holds what it wrote before)."""
        remove_files(self.folder)
        return History.open(self.folder, history_key=self._history_key, personal=self.digester.personal,
                            max_file_bytes=self._max_file_bytes)

    def _complete(self, path: Path, folding: Folding, *, interrupted: bool = False) -> Head:
        """Fold a finished journal into the snapshot and keep it. One with no entry leaves no trace,
        unless its apply was `interrupted`: a write of it may have landed with its answer lost, and
        its journal (a header alone) is what makes that write the loader's (`interrupted_applies`)."""
        renamed = self.head.with_renamed(folding.info.renamed)
        if not folding.entries and not interrupted:
            path.unlink()
            if renamed != self.head and self.started:  # a renamed block's apply with nothing to write
                self.head = renamed
                write_atomically(self.folder / HEAD, head_json(self.head))
            return self.head
        self.head = renamed
        if folding.entries:
            try:
                self.snapshot, changed = folded(folding.overlay)
            except (ValueError, IndexError, KeyError) as error:  # a line edited by hand, not read till now
                raise damaged(f"a line of the snapshot cannot be read as written ({type(error).__name__}: {error})",
                              self.folder / SNAPSHOT) from None
            limit = {"max_bytes": self._max_file_bytes} if self._max_file_bytes else {}
            write_entities(self.folder / SNAPSHOT, self.snapshot, changed, **limit)
        if folding.wrote and self.head.last_apply != folding.info.apply_id:
            self.head = self.head.moved(folding.info.apply_id, folding.service_users)
        self.head = self.head.counted({entity: self.snapshot.count(entity) for entity in self.snapshot.entities()})
        write_atomically(self.folder / HEAD, head_json(self.head))
        self.started = True
        path.rename(path.with_name(path.name.removesuffix(OPEN_SUFFIX) + DONE_SUFFIX))
        return self.head


def finished_journals(folder: Path) -> list[Path]:
    """The journals of the history in `folder` whose applies ended (or were folded after a kill),
    oldest first, each by its first part; a `HistoryError` for a file that is not a regular file."""
    return [p for p in regular_files(folder / JOURNALS, f"*{DONE_SUFFIX}")
            if not p.name.endswith(OPEN_SUFFIX) and not is_later_part(p)]


def remove_files(folder: Path) -> None:
    """Remove the snapshot, the journals and the head of the history in `folder`, whatever they have
    become (a symbolic link is removed, never followed), nothing else. Refused while an apply writes
    this history: its writes would follow into a history that no longer holds what it wrote before."""
    held = hold_folder(folder)  # HistoryError while another apply writes this history
    try:
        for name in (SNAPSHOT, JOURNALS, HEAD):
            path = folder / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
    finally:
        release(held)


def rekey(folder: Path, old_key: bytes | None, new_key: bytes) -> Head:
    """Move the history in `folder` to `new_key` (the data key re-wrapped; no digest changes)."""
    path = folder / HEAD
    head = read_head(path)
    if head is None:
        raise HistoryError("there is no history to rekey", where=str(folder),
                           hint="the history starts with the first apply; set the new key before it")
    if head.key_fingerprint is None or head.wrapped_data_key is None:
        data_key = keys.new_data_key()
    elif old_key is None or keys.fingerprint(old_key, head.lineage) != head.key_fingerprint:
        raise wrong_key(head.key_fingerprint, None, str(path))
    else:
        data_key = keys.unwrap(head.wrapped_data_key, old_key, head.lineage)
    moved = replace(head, key_fingerprint=keys.fingerprint(new_key, head.lineage),
                    wrapped_data_key=keys.wrap(data_key, new_key, head.lineage))
    write_atomically(path, head_json(moved))
    return moved
