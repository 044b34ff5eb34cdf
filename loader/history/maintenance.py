"""`loader history reset`: what a history folder holds, and removing it; read without the key.

A reset is what to do when the history describes another database (a reset sandbox, a refreshed
Test) or its key is lost, so it opens nothing that needs the key: it counts the files and removes
them. The next apply starts a new history (a new lineage) under the key configured then.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from loader.history.errors import HistoryError
from loader.history.head import read_head
from loader.history.snapshot import SUFFIX, read_snapshot
from loader.history.store import DONE_SUFFIX, HEAD, JOURNALS, SNAPSHOT


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
    head = read_head(folder / HEAD)
    journals = len(list((folder / JOURNALS).glob(f"*{DONE_SUFFIX}")))
    return HistoryFiles(folder, _records(folder / SNAPSHOT), journals,
                        head.lineage if head else None, head.serial if head else 0, head.last_apply if head else None)


def _records(snapshot_folder: Path) -> dict[str, int]:
    """Records per entity of the snapshot; of a damaged one (a reset is its repair), its files' lines
    counted without reading them as lines of a snapshot."""
    try:
        snapshot = read_snapshot(snapshot_folder)
        return {entity: snapshot.count(entity) for entity in snapshot.entities()}
    except (HistoryError, ValueError, IndexError, KeyError, TypeError):
        counts: dict[str, int] = {}
        for path in sorted(snapshot_folder.glob(f"*{SUFFIX}")):
            entity = path.name.split(".")[0]
            lines = path.read_bytes().splitlines()
            counts[entity] = counts.get(entity, 0) + sum(1 for line in lines if line and not line.startswith(b"#"))
        return counts


def remove_history(folder: Path) -> None:
    """Remove the snapshot, the journals and the head of the history in `folder` (nothing else)."""
    for name in (SNAPSHOT, JOURNALS):
        shutil.rmtree(folder / name, ignore_errors=True)
    (folder / HEAD).unlink(missing_ok=True)
