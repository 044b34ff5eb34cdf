"""A journal's entries folded into a snapshot, record by record: the reference for what finishing
an apply makes of its journal (`loader.history.overlay` and `loader.history.merging` make the same
lines as text, touching only the records the journal names; the tests hold the two equal).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from loader.history.journal import JournalEntry
from loader.history.lines import Edited, FieldMark, HistoryLine, moved_keys
from loader.history.snapshot import Snapshot

Lines = dict[str, HistoryLine | None]
"""One entity's lines the entries so far changed, by key token (None: a line moved to another key)."""


def fold(snapshot: Snapshot, entries: Sequence[JournalEntry]) -> Snapshot:
    """The snapshot with a journal's entries applied in order ("lost" entries change nothing)."""
    changed: dict[str, Lines] = {}
    for entry in entries:
        if entry.kind != "lost":
            lines = changed.setdefault(entry.entity, {})
            _apply(entry, _line_before(entry, lines, snapshot), lines)
    for entity, lines in sorted(changed.items()):
        snapshot = snapshot.with_lines(entity, [v for v in lines.values() if v is not None],
                                       removed=[k for k, v in lines.items() if v is None])
    return snapshot


def _line_before(entry: JournalEntry, lines: Lines, snapshot: Snapshot) -> HistoryLine | None:
    """The line `entry` changes: of the key it had before (`formerly`: renumbered), else of its key."""
    def line_of(key: str) -> HistoryLine | None:
        return lines[key] if key in lines else snapshot.get(entry.entity, key)

    line = line_of(entry.formerly if entry.formerly is not None else entry.key)
    if line is None and entry.formerly is not None:
        line = line_of(entry.key)
    return line


def _apply(entry: JournalEntry, line: HistoryLine | None, lines: Lines) -> None:
    """Set in `lines` what `entry` makes of the record's `line` (None: it has none yet)."""
    if entry.kind == "edited":
        if line is not None:
            lines[entry.key] = line.with_fields(_noted(line, entry.edited))
    elif entry.kind == "release":
        if line is not None:
            lines[entry.key] = _released(line, entry)
    else:
        _written(entry, line or HistoryLine(entry.key, entry.live_id or ""), lines)


def _released(line: HistoryLine, entry: JournalEntry) -> HistoryLine | None:
    """The line without the marks of the block `entry` released (None: no mark is left)."""
    kept = {name: mark for name, mark in line.fields.items() if mark.owner != entry.released}
    if not kept:
        return None
    return HistoryLine(line.key, line.live_id, line.updated_time, line.updated_user, kept, line.former_keys)


def _written(entry: JournalEntry, line: HistoryLine, lines: Lines) -> None:
    """A write or confirmation: its marks over the line's, its id and stamp where it has them, and a
    renumbered record's line moved to its new key."""
    former = line.former_keys
    if entry.formerly is not None and entry.formerly != entry.key:
        former = moved_keys(former, entry.formerly, entry.key)
        lines[entry.formerly] = None
    time, user = entry.updated if entry.updated else (line.updated_time, line.updated_user)
    marks = {name: FieldMark(f.owner, f.written) for name, f in entry.fields.items()}
    lines[entry.key] = HistoryLine(entry.key, entry.live_id or line.live_id, time, user, {**line.fields, **marks},
                                   former)


def _noted(line: HistoryLine, edited: Mapping[str, Edited]) -> dict[str, FieldMark]:
    """The marks of `line` that `edited` names and that name no first change yet, with it noted."""
    return {name: mark._replace(edited=edited[name]) for name, mark in line.fields.items()
            if name in edited and mark.edited is None}
