"""A journal's records over the snapshot, kept as the journal is written: per record the snapshot
line it will have once the journal is folded in.

Each line is text in the snapshot's own format (`loader.history.snapshot`), against the entity's
tables as read, with any field, owner or user new to them appended at the end. So finishing an
apply touches only the records its journal named: when nothing new was appended, their lines go
into the snapshot as they are (`loader.history.merging`). An entry is applied as `journal_fold.fold`
applies it: its fields' marks over the line's, its id and `metadata.updated` when it has them.

The overlay also notes the owners and users a line stopped naming (a field taken over, a record
last updated by someone else): the tables must name exactly what the lines use, so those are
looked for in the other lines when the fold is written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from loader.history.digests import Written
from loader.history.journal_text import Mark
from loader.history.lines import Edited, HistoryLine, Owner, moved_keys
from loader.history.snapshot import (
    FIRST_FIELD,
    SHORTEST,
    Snapshot,
    Tables,
    edited_text,
    former_text,
)


def column_text(owner_index: str, written: Written, edited: Edited | None = None) -> str:
    """One field's column: owner index, '.', and W (a set's sorted element digests after '['), then
    who first changed it in the platform, when noted."""
    if isinstance(written, str):
        return f"{owner_index}.{written}{edited_text(edited)}"
    return f"{owner_index}.[{','.join(sorted(written))}{edited_text(edited)}"


def joined(columns: list[str]) -> str:
    """A line's columns as its text, empty columns at the end dropped (the first four stay)."""
    while len(columns) > SHORTEST and not columns[-1]:
        columns.pop()
    return "\t".join(columns)


class EntityOverlay:
    """One entity's lines after the journal's entries so far, over the snapshot's `base` lines."""

    def __init__(self, tables: Tables | None, base: Mapping[str, str | HistoryLine]) -> None:
        self.base_tables = tables or Tables()
        self.base = base
        self.fields = list(self.base_tables.fields)
        self.owners = list(self.base_tables.owners)
        self.users = list(self.base_tables.users)
        self._columns = {name: FIRST_FIELD + i for i, name in enumerate(self.fields)}
        self._owner_index = {owner: str(i) for i, owner in enumerate(self.owners)}
        self._user_index = {user: str(i) for i, user in enumerate(self.users)}
        self.lines: dict[str, str] = {}
        self.dropped_owners: set[str] = set()  # owner indexes some line stopped naming
        self.dropped_users: set[str] = set()

    def tables(self) -> Tables:
        """The tables the overlay's lines are written against (the base's, then names new to it)."""
        return Tables(tuple(self.fields), tuple(self.owners), tuple(self.users))

    def add(self, key: str, live_id: str | None, updated: tuple[int, str | None] | None,
            marks: Mapping[str, Mark], *, formerly: str | None = None,
            edited: Mapping[str, Edited] | None = None, released: Owner | None = None) -> None:
        """Apply one journal entry (its marks by field name) to the record `key` (a key token);
        `formerly`: the key its line had before (it moves to `key`); `edited`: per field, who first
        changed it in the platform (noted where the field's column names no first change yet)."""
        columns = self._line_of(key, formerly, make=not edited and released is None)
        if columns is None:
            return  # no line: nothing to note the platform's changes on, nor to release
        if formerly is not None and formerly != key:
            self._move(columns, formerly, key)
        if released is not None:  # a `release` entry: the block's marks go, and the line with the last one
            self.lines[key] = self._released(columns, released)
            return
        if edited:  # an `edited` entry notes who changed fields, and nothing else
            self._note(columns, edited)
        else:
            self._stamp(columns, live_id, updated)
            self._mark(columns, marks)
        self.lines[key] = joined(columns)

    def _line_of(self, key: str, formerly: str | None, *, make: bool) -> list[str] | None:
        """The columns of the line an entry for `key` changes: the line of `formerly` (a renumbered
        record's), else of `key`, else (`make`) a new one; at least up to the former keys column."""
        columns = self._columns_of(formerly if formerly is not None else key)
        if columns is None and formerly is not None:
            columns = self._columns_of(key)
        if columns is None:
            if not make:
                return None
            columns = [key, "", "", "", ""] + [""] * len(self.fields)
        if len(columns) == SHORTEST:
            columns.append("")
        return columns

    def _move(self, columns: list[str], formerly: str, key: str) -> None:
        """The line moves from the key `formerly` to `key`, which it had before: the old key is a former one."""
        former = tuple(json.loads(columns[SHORTEST])) if columns[SHORTEST] else ()
        columns[0], columns[SHORTEST] = key, former_text(moved_keys(former, formerly, key))
        self.lines[formerly] = ""  # the old key's line is gone

    def _stamp(self, columns: list[str], live_id: str | None, updated: tuple[int, str | None] | None) -> None:
        """The live id and `metadata.updated` of a write or confirmation, where it has them."""
        if live_id:
            columns[1] = live_id
        if updated is not None:
            time, updater = updated
            user = "" if updater is None else self._user_index.get(updater) or self._user(updater)
            if columns[3] and columns[3] != user:
                self.dropped_users.add(columns[3])
            columns[2] = str(time) if type(time) is int else str(int(time))
            columns[3] = user

    def _mark(self, columns: list[str], marks: Mapping[str, Mark]) -> None:
        """Each field's mark over its column (an owner it replaces noted as perhaps no longer named)."""
        at_of, index_of, size = self._columns, self._owner_index, len(columns)
        for name, (owner, written, *_) in marks.items():
            at = at_of.get(name) or self._field(name)
            if at >= size:
                columns += [""] * (at + 1 - size)
                size = at + 1
            index = index_of.get(owner) or self._owner(owner)
            old_column = columns[at]
            if old_column and old_column[:old_column.index(".")] != index:
                self.dropped_owners.add(old_column[:old_column.index(".")])
            columns[at] = f"{index}.{written}" if type(written) is str else column_text(index, written)

    def _columns_of(self, key: str) -> list[str] | None:
        """The columns of the line of `key` as the entries so far left it (None: it has none)."""
        text = self.lines.get(key)
        if text is None:
            old = self.base.get(key)
            if old is None:
                return None
            return (old if isinstance(old, str) else self.render(old)).split("\t")
        return text.split("\t") if text else None

    def _released(self, columns: list[str], owner: Owner) -> str:
        """The line's text once `owner`'s marks are gone ("" when no mark is left); the owner and user
        it may stop naming are noted, so the tables are worked out again."""
        index = self._owner_index.get(owner)
        if index is not None:
            for at in range(FIRST_FIELD, len(columns)):
                if columns[at] and columns[at][:columns[at].index(".")] == index:
                    columns[at] = ""
                    self.dropped_owners.add(index)
        if any(columns[FIRST_FIELD:]):
            return joined(columns)
        if columns[3]:
            self.dropped_users.add(columns[3])
        return ""

    def _note(self, columns: list[str], edited: Mapping[str, Edited]) -> None:
        """Note who first changed each field of `edited` on `columns`, where not noted yet."""
        for name, stamp in edited.items():
            at = self._columns.get(name)
            if at is not None and at < len(columns) and columns[at] and "@" not in columns[at]:
                columns[at] += edited_text(stamp)

    def render(self, line: HistoryLine) -> str:
        """A parsed line as text against the overlay's tables (appending the names it lacks)."""
        columns = [line.key, line.live_id, "" if line.updated_time is None else str(line.updated_time),
                   "" if line.updated_user is None else self._user(line.updated_user), former_text(line.former_keys)]
        for name, mark in line.fields.items():
            at = self._columns.get(name) or self._field(name)
            if at >= len(columns):
                columns += [""] * (at + 1 - len(columns))
            columns[at] = column_text(self._owner_index.get(mark.owner) or self._owner(mark.owner), mark.written,
                                      mark.edited)
        return joined(columns)

    def _field(self, name: str) -> int:
        self.fields.append(name)
        at = self._columns[name] = FIRST_FIELD + len(self.fields) - 1
        return at

    def _owner(self, owner: Owner) -> str:
        self.owners.append(owner)
        index = self._owner_index[owner] = str(len(self.owners) - 1)
        return index

    def _user(self, user: str) -> str:
        index = self._user_index.get(user)
        if index is None:
            self.users.append(user)
            index = self._user_index[user] = str(len(self.users) - 1)
        return index


class Overlay:
    """A journal's entries over the snapshot `base`, entity by entity (what `journal_fold.fold` makes of
    them, kept as text; `merging.folded` makes the snapshot of it)."""

    def __init__(self, base: Snapshot) -> None:
        self.base = base
        self.entities: dict[str, EntityOverlay] = {}

    def add(self, entity: str, key: str, live_id: str | None, updated: tuple[int, str | None] | None,
            marks: Mapping[str, Mark], *, formerly: str | None = None,
            edited: Mapping[str, Edited] | None = None, released: Owner | None = None) -> None:
        overlay = self.entities.get(entity)
        if overlay is None:
            tables, lines = self.base.raw_items(entity)
            overlay = self.entities[entity] = EntityOverlay(tables, lines)
        overlay.add(key, live_id, updated, marks, formerly=formerly, edited=edited, released=released)

    def __len__(self) -> int:
        return sum(1 for overlay in self.entities.values() for text in overlay.lines.values() if text)
