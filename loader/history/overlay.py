"""A journal's records over the snapshot, kept as the journal is written: per record the snapshot
line it will have once the journal is folded in.

Each line is text in the snapshot's own format (`loader.history.snapshot`), against the entity's
tables as read, with any field, owner or user new to them appended at the end. So finishing an
apply touches only the records its journal named: when nothing new was appended, their lines go
into the snapshot as they are (`loader.history.merging`). An entry is applied as `journal.fold`
applies it: its fields' marks over the line's, its id and `metadata.updated` when it has them.

The overlay also notes the owners and users a line stopped naming (a field taken over, a record
last updated by someone else): the tables must name exactly what the lines use, so those are
looked for in the other lines when the fold is written.
"""

from __future__ import annotations

from collections.abc import Mapping

from loader.history.digests import Written
from loader.history.journal_text import Mark
from loader.history.lines import HistoryLine, Owner
from loader.history.snapshot import Snapshot, Tables

FIRST_FIELD = 4  # key, id, time, user, then one column per field of the tables


def column_text(owner_index: str, written: Written) -> str:
    """One field's column: owner index, '.', and W (a set's sorted element digests after '[')."""
    if isinstance(written, str):
        return f"{owner_index}.{written}"
    return f"{owner_index}.[{','.join(sorted(written))}"


def joined(columns: list[str]) -> str:
    """A line's columns as its text, empty columns at the end dropped (the first four stay)."""
    while len(columns) > FIRST_FIELD and not columns[-1]:
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
            marks: Mapping[str, Mark]) -> None:
        """Apply one journal entry (its marks by field name) to the record `key` (a key token)."""
        text = self.lines.get(key)
        if text is None:
            old = self.base.get(key)
            if old is None:
                columns = [key, "", "", ""] + [""] * len(self.fields)
            else:
                columns = (old if isinstance(old, str) else self.render(old)).split("\t")
        else:
            columns = text.split("\t")
        if live_id:
            columns[1] = live_id
        if updated is not None:
            time, updater = updated
            user = "" if updater is None else self._user_index.get(updater) or self._user(updater)
            if columns[3] and columns[3] != user:
                self.dropped_users.add(columns[3])
            columns[2] = str(time) if type(time) is int else str(int(time))
            columns[3] = user
        at_of, index_of, size = self._columns, self._owner_index, len(columns)
        for name, (owner, written, _) in marks.items():
            at = at_of.get(name) or self._field(name)
            if at >= size:
                columns += [""] * (at + 1 - size)
                size = at + 1
            index = index_of.get(owner) or self._owner(owner)
            old_column = columns[at]
            if old_column and old_column[:old_column.index(".")] != index:
                self.dropped_owners.add(old_column[:old_column.index(".")])
            columns[at] = f"{index}.{written}" if type(written) is str else column_text(index, written)
        self.lines[key] = joined(columns)

    def render(self, line: HistoryLine) -> str:
        """A parsed line as text against the overlay's tables (appending the names it lacks)."""
        columns = [line.key, line.live_id, "" if line.updated_time is None else str(line.updated_time),
                   "" if line.updated_user is None else self._user(line.updated_user)]
        for name, mark in line.fields.items():
            at = self._columns.get(name) or self._field(name)
            if at >= len(columns):
                columns += [""] * (at + 1 - len(columns))
            columns[at] = column_text(self._owner_index.get(mark.owner) or self._owner(mark.owner), mark.written)
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
    """A journal's entries over the snapshot `base`, entity by entity (what `journal.fold` makes of
    them, kept as text; `merging.folded` makes the snapshot of it)."""

    def __init__(self, base: Snapshot) -> None:
        self.base = base
        self.entities: dict[str, EntityOverlay] = {}

    def add(self, entity: str, key: str, live_id: str | None, updated: tuple[int, str | None] | None,
            marks: Mapping[str, Mark]) -> None:
        overlay = self.entities.get(entity)
        if overlay is None:
            tables, lines = self.base.raw_items(entity)
            overlay = self.entities[entity] = EntityOverlay(tables, lines)
        overlay.add(key, live_id, updated, marks)

    def __len__(self) -> int:
        return sum(len(overlay.lines) for overlay in self.entities.values())
