"""A journal read back: whole (`read_journal`), replayed over the snapshot as it is read (`replay`,
what folding a leftover journal needs), or by its header and counts alone (`read_journal_summary`).

A journal of any format this release reads (1, 2, 3) is read, all its parts in order
(`loader.history.journal_parts`); a torn last line (an apply killed as it wrote) is skipped, and
any other line that cannot be an entry, or a part missing, is a `HistoryError` naming the file,
the line and the repair.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Generator, Iterator, Mapping, Set
from pathlib import Path
from typing import Any

from loader.history.digests import Written
from loader.history.errors import HistoryError
from loader.history.files import MAX_LINE_BYTES, damaged, open_regular, read_lines
from loader.history.journal import KINDS, WRITES, ApplyInfo, Folding, Journal, JournalEntry, JournalField
from loader.history.journal_parts import PART, apply_id_of, continued_to, part_path
from loader.history.journal_text import NO_VALUE
from loader.history.lines import Edited, Owner
from loader.history.overlay import Overlay
from loader.history.snapshot import Snapshot


def _written_from(value: Any) -> Written:
    return value if isinstance(value, str) else frozenset(str(v) for v in value)


# What a line of JSON that is not an entry the loader wrote raises as it is read.
UNREADABLE = (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError)


def journal_items(path: Path) -> Iterator[dict[str, Any]]:
    """The parsed lines of the journal whose first part is `path`, every part in order (its parts'
    own header and continuation lines left out). A torn last line (a killed apply's: it has no line
    break) is skipped; any other line that is not a JSON object is a `HistoryError` naming the file
    and the line, as is a file that is not a regular file (`loader.history.files`) and a part that
    the part before says follows and is missing."""
    number: int | None = 1
    while number is not None:
        part = part_path(path, number)
        if number > 1 and not part.exists():
            raise _missing_part(path, number)
        number = yield from _part_items(part, number)


def _part_items(part: Path, number: int) -> Generator[dict[str, Any], None, int | None]:
    """The items of one part of a journal; returns the number of the part that follows (None: none)."""
    following = None
    for at, row in enumerate(read_lines(part), 1):
        try:
            item = json.loads(row)
        except ValueError:
            item = None
        if not isinstance(item, dict):
            if row.endswith(b"\n") or item is not None:
                raise damaged(f"line {at} is not a journal line (edited by hand?)", part)
        elif at == 1 and number > 1:
            if item.get(PART) != number or item.get("apply") != apply_id_of(part):
                raise damaged(f"its first line is not the header of part {number} of the apply "
                              f"{apply_id_of(part)}'s journal (edited by hand?)", part)
        elif (next_part := continued_to(item)) is not None:
            if next_part != number + 1:
                raise damaged(f"line {at} names a part that does not follow part {number} (edited by hand?)", part)
            following = next_part
        else:
            yield item
    return following


def _missing_part(first: Path, number: int) -> HistoryError:
    return damaged(f"is missing: part {number} of the journal {first.name}, which its part {number - 1} says "
                   "follows (deleted, or left out of a commit?)", part_path(first, number))


def rows_naming(path: Path, keys: Set[str]) -> Iterator[bytes]:
    """The lines of the journal whose first part is `path` (every part, in order, each read a line at
    a time) whose entry names one of the record key tokens `keys`, told from the line's text: the
    other lines are never parsed."""
    for part in part_paths(path):
        for row in read_lines(part):
            if line_key(row) in keys:
                yield row


_KEY = b'"key":'
_STRING = re.compile(rb'\s*("(?:[^"\\]|\\.)*")')  # a JSON string, after spaces any JSON writer may put


def line_key(row: bytes) -> str | None:
    """The record key token a journal line names, read from its text: an entry's own "key" is its
    last (nested values come before it, and a quote inside a string is escaped)."""
    at = row.rfind(_KEY)
    match = None if at < 0 else _STRING.match(row, at + len(_KEY))
    if match is None:
        return None
    try:
        key = json.loads(match.group(1))
    except ValueError:
        return None
    return key if isinstance(key, str) else None


def part_paths(path: Path) -> list[Path]:
    """Every part of the journal whose first part is `path`, in order (only each part's last line read)."""
    paths = [path]
    while (number := continued_to(_loaded(_first_and_last(paths[-1])[1]))) is not None:
        paths.append(part_path(path, number))
        if not paths[-1].exists():
            raise _missing_part(path, number)
    return paths


def _loaded(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def read_journal(path: Path) -> Journal:
    """The journal in `path`; a torn last line (a killed apply) is skipped."""
    info: ApplyInfo | None = None
    entries: list[JournalEntry] = []
    counts: Mapping[str, int] | None = None
    for item in journal_items(path):
        try:
            if "journal" in item:
                info = info_from(item)
            elif "end" in item:
                counts = item["end"]
            else:
                entries.append(entry_from(item))
        except UNREADABLE as error:
            raise _unreadable(path, item, error) from None
    if info is None:
        info = ApplyInfo(path.name.split(".")[0], "", "", None, None)
    return Journal(info, tuple(entries), counts)


def _unreadable(path: Path, item: Mapping[str, Any], error: Exception) -> HistoryError:
    what = f"missing {error}" if isinstance(error, KeyError) else str(error)
    return damaged(f"an entry of the record {str(item.get('key'))[:80]} cannot be read ({what}; edited by hand?)",
                   path)


def replay(path: Path, base: Snapshot) -> Folding:
    """The journal in `path` made ready to fold into `base` (as `JournalWriter.folding`), its entries
    applied one by one as they are read and not kept; a torn last line is skipped."""
    info = ApplyInfo(path.name.split(".")[0], "", "", None, None)
    overlay = Overlay(base)
    entries = 0
    kinds: set[str] = set()
    users: set[str] = set()
    for item in journal_items(path):
        if "end" in item:
            continue
        try:
            if "journal" in item:
                info = info_from(item)
                continue
            kind = _kind(item)
            entries += 1
            kinds.add(kind)
            updated = item.get("updated")
            stamp = (int(updated[0]), updated[1]) if updated else None
            if stamp is not None and stamp[1] and kind in WRITES:
                users.add(stamp[1])
            if kind != "lost":
                block = item.get("block")
                marks = {name: (Owner(*f.get("owner", block)), _written_from(f["w"]), None, NO_VALUE)
                         for name, f in item.get("fields", {}).items()}
                overlay.add(_text(item["entity"]), _text(item["key"]), item.get("id"), stamp, marks,
                            formerly=item.get("formerly"), edited=_edited_from(item.get("edited")),
                            released=_owner_from(item.get("owner")))
        except UNREADABLE as error:
            raise _unreadable(path, item, error) from None
    return Folding(info, overlay, entries, bool(kinds & WRITES), frozenset(users))


def _kind(item: Mapping[str, Any]) -> str:
    kind = item["kind"]
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")
    return str(kind)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not text")
    return value


def info_from(header: Mapping[str, Any]) -> ApplyInfo:
    """The apply a journal's header line (parsed) names; a TypeError when its id or time is not text."""
    renamed = tuple((Owner(*map(_text, new)), Owner(*map(_text, old))) for new, old in header.get("renamed", ()))
    info = ApplyInfo(header["apply"], header["time"], header["environment"], header["plan_digest"], header["by"],
                     renamed)
    if not isinstance(info.apply_id, str) or not isinstance(info.time, str):
        raise TypeError("the apply's id and time must be text")
    return info


def entry_from(item: Mapping[str, Any]) -> JournalEntry:
    """One journal line's entry, from its parsed JSON (of format 1, 2 or 3)."""
    updated = item.get("updated")
    block = item.get("block")
    fields = {name: JournalField(Owner(*f.get("owner", block)), _written_from(f["w"]), f.get("before"),
                                 f.get("after"), "after" in f)
              for name, f in item.get("fields", {}).items()}
    return JournalEntry(_kind(item), _text(item["entity"]), _text(item["key"]), item.get("id"),
                        (int(updated[0]), updated[1]) if updated else None, fields, item.get("formerly"),
                        _edited_from(item.get("edited")), _owner_from(item.get("owner")))


def _owner_from(value: Any) -> Owner | None:
    """A `release` entry's owner."""
    return Owner(str(value[0]), str(value[1])) if isinstance(value, list) and len(value) == 2 else None


def _edited_from(value: Any) -> dict[str, Edited]:
    """An `edited` entry's fields: per field (time, user)."""
    if not isinstance(value, Mapping):
        return {}
    return {str(name): (int(stamp[0]), None if stamp[1] is None else str(stamp[1])) for name, stamp in value.items()}


TAIL_BYTES = 65536


def first_and_last_line(path: Path) -> tuple[bytes, bytes]:
    """A journal's header line and its last line (its end line when it has one: in its last part),
    read alone."""
    first, last = _first_and_last(path)
    while (number := continued_to(_loaded(last))) is not None:
        part = part_path(path, number)
        if not part.exists():
            raise _missing_part(path, number)
        last = _first_and_last(part)[1]
    return first, last


def _first_and_last(path: Path) -> tuple[bytes, bytes]:
    """One file's first line and last line."""
    fd = open_regular(path)
    if fd is None:
        raise damaged("is missing", path)
    with os.fdopen(fd, "rb") as handle:
        first = handle.readline(MAX_LINE_BYTES)
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - TAIL_BYTES))
        last = handle.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    return first, last


def read_journal_summary(path: Path) -> Journal:
    """The journal in `path` with its header and counts but no entries (read whole when it has no
    counts: an interrupted apply's, whose entries are counted instead)."""
    first, last = first_and_last_line(path)
    try:
        header, end = json.loads(first), json.loads(last)
    except ValueError:
        return read_journal(path)
    if not isinstance(header, dict) or "journal" not in header or not isinstance(end, dict) or "end" not in end:
        return read_journal(path)
    try:
        return Journal(info_from(header), (), end["end"])
    except UNREADABLE as error:
        raise damaged(f"its first line is not a journal's header ({error})", path) from None
