"""`loader history reset`: what a history folder holds, and removing it; read without the key.

A reset is what to do when the history describes another database (a reset sandbox, a refreshed
Test) or its key is lost, so it opens nothing that needs the key: it counts the files and removes
them. The next apply starts a new history (a new lineage) under the key configured then.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loader.history.errors import HistoryError
from loader.history.files import MAX_FILE_BYTES, read_bounded
from loader.history.head import read_head
from loader.history.journal_parts import is_later_part
from loader.history.snapshot import SUFFIX
from loader.history.snapshot_files import read_snapshot
from loader.history.store import DONE_SUFFIX, HEAD, JOURNALS, SNAPSHOT, remove_files


@dataclass(frozen=True)
class HistoryFiles:
    """What a history folder holds: records per entity in the snapshot, journals, the head."""

    folder: Path
    records: dict[str, int]
    journals: int
    lineage: str | None
    serial: int
    last_apply: str | None

    @property
    def empty(self) -> bool:
        return self.lineage is None and not self.records and not self.journals


def history_files(folder: Path) -> HistoryFiles:
    """What the history in `folder` holds, told however damaged its files are (a reset is the repair
    of every damage): a head that cannot be read counts as one of lineage `unreadable`."""
    try:
        head = read_head(folder / HEAD)
        lineage, serial, last = (head.lineage, head.serial, head.last_apply) if head else (None, 0, None)
    except HistoryError:
        lineage, serial, last = "unreadable", 0, None
    journals = folder / JOURNALS
    count = len([p for p in journals.glob(f"*{DONE_SUFFIX}") if not is_later_part(p)]) \
        if journals.is_dir() and not journals.is_symlink() else 0
    return HistoryFiles(folder, _records(folder / SNAPSHOT), count, lineage, serial, last)


def _records(snapshot_folder: Path) -> dict[str, int]:
    """Records per entity of the snapshot; of a damaged one (a reset is its repair), the lines of its
    regular files counted without reading them as lines of a snapshot."""
    try:
        snapshot = read_snapshot(snapshot_folder)
        return {entity: snapshot.count(entity) for entity in snapshot.entities()}
    except HistoryError:
        counts: dict[str, int] = {}
        if snapshot_folder.is_symlink() or not snapshot_folder.is_dir():
            return counts
        for path in sorted(snapshot_folder.glob(f"*{SUFFIX}")):
            try:
                data = read_bounded(path, MAX_FILE_BYTES) or b""
            except HistoryError:
                continue  # not a regular file, or outsized: removed all the same
            entity = path.name.split(".")[0]
            counts[entity] = counts.get(entity, 0) + sum(1 for line in data.splitlines()
                                                         if line and not line.startswith(b"#"))
        return counts


def remove_history(folder: Path) -> None:
    """Remove the snapshot, the journals and the head of the history in `folder` (nothing else,
    nothing through a symbolic link); refused while an apply writes this history."""
    remove_files(folder)
