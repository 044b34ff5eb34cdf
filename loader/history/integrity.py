"""A damaged history is refused, never read as less history than it is.

A snapshot line lost (a bad merge, a hand edit) reads as a record the loader never loaded: its
platform edits would be compared two-way and overwritten without a note. So before a history is
used, what its head says is checked against its files: a snapshot or journals with no head, a
snapshot file cut off mid-line, an entity with fewer or more lines than the head counted. Each is
a `HistoryError` naming the file and the repair: the folder as git last had it, else a reset and
a baseline. (A head written before it counted lines is checked for the rest.)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from loader.history.errors import HistoryError
from loader.history.files import open_regular, regular_files, repair_hint
from loader.history.head import Head
from loader.history.snapshot import SUFFIX, Snapshot
from loader.words import plural


def refuse_damaged_files(folder: Path, head_path: Path, head: Head | None, snapshot_folder: Path,
                         journals: Iterable[Path]) -> None:
    """Raise a `HistoryError` when the history in `folder` has a snapshot or journals (`journals`:
    its finished ones) but no head, or a snapshot file cut off mid-line. Before the snapshot is read."""
    shards = _shards(snapshot_folder)
    if head is None:
        if shards or any(True for _ in journals):
            raise HistoryError(f"the history has a snapshot or journals but no {head_path.name}: it cannot be told "
                               "which records the loader wrote", where=str(head_path), hint=repair_hint(folder))
        return
    for path in shards:
        if not _ends_a_line(path):
            raise HistoryError("the snapshot file ends in the middle of a line (cut off?)", where=str(path),
                               hint=repair_hint(folder))


def refuse_lost_lines(folder: Path, head_path: Path, head: Head | None, snapshot_folder: Path,
                      snapshot: Snapshot) -> None:
    """Raise a `HistoryError` when an entity of `snapshot` (as read, before any leftover journal is
    folded) has another number of lines than the head counted. Call it only when no journal is
    being written or left to fold: the snapshot is then ahead of the head."""
    if head is None or head.lines is None:
        return
    counted = dict(head.lines)
    for entity in sorted(set(counted) | set(snapshot.entities())):
        found, recorded = snapshot.count(entity), counted.get(entity, 0)
        if found != recorded:
            where = next((p for p in _shards(snapshot_folder) if p.name.startswith(f"{entity}.")),
                         snapshot_folder / f"{entity}{SUFFIX}")
            lines = plural(found, f"{entity} line")
            raise HistoryError(f"the snapshot holds {lines}, {head_path.name} counted {recorded}: "
                               "lines were lost or added by hand (a bad merge?)", where=str(where),
                               hint=repair_hint(folder))


def _shards(snapshot_folder: Path) -> list[Path]:
    return regular_files(snapshot_folder, f"*{SUFFIX}")


def _ends_a_line(path: Path) -> bool:
    """Whether the file is empty or its last byte ends a line."""
    fd = open_regular(path)
    if fd is None:
        return True
    with os.fdopen(fd, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return True
        handle.seek(size - 1)
        return handle.read(1) == b"\n"
