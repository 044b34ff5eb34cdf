"""A journal's overlay folded into the snapshot, and the entities it touched written.

The lines the journal did not touch stay the text they were read as. The tables of an entity name
exactly, sorted, the fields, owners and users its lines use: when the overlay named nothing new
and no line stopped naming something, they are the tables as read and every line goes out as it
is; otherwise the new tables are worked out and each line's indexes renumbered as text (no line
is parsed into a record). Either way the files are byte for byte what writing the whole snapshot
afresh makes (`snapshot_files.write_snapshot`), and only the entities the journal touched are written:
a file whose bytes did not change is not rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import cast

from loader.history.files import checked_folder, write_atomically
from loader.history.lines import HistoryLine, Owner
from loader.history.overlay import EntityOverlay, Overlay, joined
from loader.history.snapshot import (
    FIRST_FIELD,
    MAX_FILE_BYTES,
    SUFFIX,
    Snapshot,
    Tables,
)
from loader.history.snapshot_files import render_header, shard_paths, shard_texts


class Renumbering:
    """Moves lines written against `old` tables to `new` ones (which name all the old names used)."""

    def __init__(self, old: Tables, new: Tables) -> None:
        field_at = {name: i for i, name in enumerate(new.fields)}
        owner_at = {owner: str(i) for i, owner in enumerate(new.owners)}
        user_at = {user: str(i) for i, user in enumerate(new.users)}
        self.fields = [field_at.get(name, -1) for name in old.fields]
        self.owners = {str(i): owner_at.get(owner, "?") for i, owner in enumerate(old.owners)}
        self.users = {str(i): user_at.get(user, "?") for i, user in enumerate(old.users)}
        self.width = len(new.fields)
        self.same_fields = all(at == i for i, at in enumerate(self.fields))
        self.same_owners = all(k == v for k, v in self.owners.items())
        self.same_users = all(k == v for k, v in self.users.items())
        self.identity = self.same_fields and self.same_owners and self.same_users

    def line(self, text: str) -> str:
        """`text` against the new tables."""
        if self.identity:
            return text
        columns = text.split("\t")
        if not self.same_users and columns[3]:
            columns[3] = self.users[columns[3]]
        if self.same_fields and self.same_owners:
            return "\t".join(columns)
        moved = [""] * self.width
        for i, column in enumerate(columns[FIRST_FIELD:]):
            if column:
                if not self.same_owners:
                    dot = column.index(".")
                    column = self.owners[column[:dot]] + column[dot:]
                moved[self.fields[i]] = column
        return joined(columns[:FIRST_FIELD] + moved)


def _used_indexes(lines: Iterable[str], fields: set[int], owners: set[str], users: set[str]) -> None:
    """Add the field, owner and user indexes `lines` use to the sets ("": a line gone)."""
    for text in lines:
        if not text:
            continue
        columns = text.split("\t")
        if columns[3]:
            users.add(columns[3])
        for i, column in enumerate(columns[FIRST_FIELD:]):
            if column:
                fields.add(i)
                owners.add(column[:column.index(".")])


def _used_names(overlay: EntityOverlay) -> Tables:
    """The names the entity's lines use once folded, by looking at every line (the slow way: a line
    stopped naming something, or the snapshot holds lines not read as text)."""
    fields: set[str] = set()
    owners: set[Owner] = set()
    users: set[str] = set()
    base_fields: set[int] = set()
    base_owners: set[str] = set()
    base_users: set[str] = set()
    untouched = [value for key, value in overlay.base.items() if key not in overlay.lines]
    _used_indexes((v for v in untouched if isinstance(v, str)), base_fields, base_owners, base_users)
    for line in untouched:
        if isinstance(line, HistoryLine):
            fields.update(line.fields)
            owners.update(mark.owner for mark in line.fields.values())
            if line.updated_user is not None:
                users.add(line.updated_user)
    base = overlay.base_tables
    fields.update(base.fields[i] for i in base_fields)
    owners.update(base.owners[int(i)] for i in base_owners)
    users.update(base.users[int(i)] for i in base_users)
    new_fields: set[int] = set()
    new_owners: set[str] = set()
    new_users: set[str] = set()
    _used_indexes(overlay.lines.values(), new_fields, new_owners, new_users)
    fields.update(overlay.fields[i] for i in new_fields)
    owners.update(overlay.owners[int(i)] for i in new_owners)
    users.update(overlay.users[int(i)] for i in new_users)
    return Tables(tuple(sorted(fields)), tuple(sorted(owners)), tuple(sorted(users)))


def folded_entity(overlay: EntityOverlay) -> tuple[Tables, dict[str, str]]:
    """(tables, every line as text) of one entity once its overlay is folded in."""
    base = overlay.base
    parsed = any(not isinstance(value, str) for value in base.values())
    touched = overlay.tables()
    if parsed or overlay.dropped_owners or overlay.dropped_users:
        new = _used_names(overlay)
    else:  # the tables as read name what the lines use (and the names appended are used)
        new = Tables(tuple(sorted(touched.fields)), tuple(sorted(touched.owners)), tuple(sorted(touched.users)))
    lines: dict[str, str] = {}
    from_base = Renumbering(overlay.base_tables, new)
    if from_base.identity and not parsed:
        lines.update(cast(Mapping[str, str], base))  # every value is text (not `parsed`)
    else:
        render = EntityOverlay(new, {})
        for key, value in base.items():
            if key not in overlay.lines:
                lines[key] = from_base.line(value) if isinstance(value, str) else render.render(value)
    from_overlay = Renumbering(touched, new)
    for key, text in overlay.lines.items():
        if text:
            lines[key] = from_overlay.line(text)
        else:  # a renumbered record's line, moved to its new key
            lines.pop(key, None)
    return new, lines


def folded(overlay: Overlay) -> tuple[Snapshot, list[str]]:
    """(the snapshot with the overlay folded in, the entities it changed)."""
    base = overlay.base
    entities: dict[str, Mapping[str, str | HistoryLine]] = {e: base.raw_items(e)[1] for e in base.entities()}
    tables: dict[str, Tables] = {}
    for entity in base.entities():
        read = base.raw_items(entity)[0]
        if read is not None:
            tables[entity] = read
    changed = []
    for entity, entity_overlay in sorted(overlay.entities.items()):
        if entity_overlay.lines:
            tables[entity], entities[entity] = folded_entity(entity_overlay)
            changed.append(entity)
    return Snapshot(entities, tables, base.sources), changed


def _shard_pattern(entity: str) -> re.Pattern[str]:
    return re.compile(re.escape(entity) + r"(\.\d{3})?" + re.escape(SUFFIX))


def write_entities(folder: Path, snapshot: Snapshot, entities: Iterable[str], *,
                   max_bytes: int = MAX_FILE_BYTES) -> list[Path]:
    """Write the files of `entities` of `snapshot`, whose lines are all text (as `folded` leaves
    them); an entity's files it no longer needs are removed. The other entities' files are left."""
    if not checked_folder(folder):  # a folder that is a symbolic link is refused, never written into
        folder.mkdir(parents=True)
    written: list[Path] = []
    for entity in entities:
        tables, lines = snapshot.raw_items(entity)
        assert tables is not None
        texts = shard_texts(render_header(entity, tables), [cast(str, lines[key]) for key in sorted(lines)], max_bytes)
        paths = shard_paths(folder, entity, len(texts))
        for path, text in zip(paths, texts, strict=True):
            write_atomically(path, text.encode())
        pattern = _shard_pattern(entity)
        for stale in folder.glob(f"*{SUFFIX}"):
            if pattern.fullmatch(stale.name) and stale not in paths:
                stale.unlink()
        written += paths
    return written

