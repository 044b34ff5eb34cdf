"""The snapshot: one file per entity (split by key range when large), one sorted line a record.

    #loader-history-snapshot 2<TAB>programs
    #field<TAB>"code"                 fields, owners and users: small tables at the top,
    #owner<TAB>["programs.yaml","p"]  numbered by their order, so record lines stay short
    #user<TAB>"5c0e…"
    ["P-001"]<TAB>Ww3v…<TAB>1717000000000<TAB>0<TAB><TAB>0.Ab3d…<TAB><TAB>0.[Qx…,Zz…

A record line is key token, id token, `metadata.updated` time and user (table index), former keys
(a JSON list of key tokens; empty when the record never had another key), then one column per field
of the table: empty when the record has no mark for it, else owner index, '.', and W (a set's
element digests after '['), then, for a field changed in the platform since the loader's value,
'@', the time and ':' the user of that first change (the user's id compacted as live ids are). Same
records give the same bytes; lines are sorted by key, so a git diff shows one line a changed record.
Reading keeps each line as text and parses it when asked, so a large snapshot loads in a fraction
of a second.

Format 1 (the previous release's) had no former keys column and no '@': its lines read as format 2
lines with an empty former keys column, and an entity's file is written in format 2 when it changes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, KeysView, Mapping
from dataclasses import dataclass
from pathlib import Path

from loader.history.digests import compact_id, expand_id
from loader.history.errors import HistoryError
from loader.history.files import damaged
from loader.history.lines import Edited, FieldMark, HistoryLine, Owner

FORMAT = 2
MAGIC_PREFIX = "#loader-history-snapshot "
MAGIC = f"{MAGIC_PREFIX}{FORMAT}"
READABLE = frozenset({1, FORMAT})  # the formats this release reads
FIRST_FIELD = 5  # key, id, time, user, former keys, then one column per field of the tables
SHORTEST = 4  # a line's columns when it has no former keys and no field
MAX_FILE_BYTES = 50 * 1024 * 1024
SUFFIX = ".tsv"


@dataclass(frozen=True)
class Tables:
    """The numbered names one shard's lines refer to."""

    fields: tuple[str, ...] = ()
    owners: tuple[Owner, ...] = ()
    users: tuple[str, ...] = ()


class Snapshot:
    """The snapshot of one history: (entity, key token) -> line. A value: `with_lines` makes a new one."""

    def __init__(self, entities: Mapping[str, Mapping[str, str | HistoryLine]] | None = None,
                 tables: Mapping[str, Tables] | None = None, sources: Mapping[str, Path] | None = None) -> None:
        self._lines: dict[str, dict[str, str | HistoryLine]] = {e: dict(v) for e, v in (entities or {}).items()}
        self._tables: dict[str, Tables] = dict(tables or {})
        self._ids: dict[str, dict[str, str]] = {}
        self._formers: dict[str, dict[str, str]] = {}
        self.sources: dict[str, Path] = dict(sources or {})  # per entity, a file its lines were read from

    def entities(self) -> list[str]:
        return sorted(e for e, lines in self._lines.items() if lines)

    def keys(self, entity: str) -> list[str]:
        return sorted(self._lines.get(entity, {}))

    def key_tokens(self, entity: str) -> KeysView[str]:
        """The key tokens of every record of `entity`, unsorted (a view: `in` and `len` are cheap)."""
        return self._lines.get(entity, {}).keys()

    def count(self, entity: str | None = None) -> int:
        if entity is None:
            return sum(len(v) for v in self._lines.values())
        return len(self._lines.get(entity, {}))

    def get(self, entity: str, key: str) -> HistoryLine | None:
        """The line of the record `key` (a key token), or None when the history has none."""
        line = self._lines.get(entity, {}).get(key)
        if line is None or isinstance(line, HistoryLine):
            return line
        try:
            return parse_line(line, self._tables[entity])
        except (ValueError, IndexError, OverflowError):
            raise unreadable_line(line, self.source(entity)) from None

    def source(self, entity: str) -> Path:
        """The snapshot file (the first, when split) the lines of `entity` were read from."""
        return self.sources.get(entity, Path(f"{entity}{SUFFIX}"))

    def key_for_id(self, entity: str, id_token: str) -> str | None:
        """The key token of the record the history knows by the live id `id_token`."""
        ids = self._ids.get(entity)
        if ids is None:
            try:
                ids = self._ids[entity] = {_id_of(line): key for key, line in self._lines.get(entity, {}).items()}
            except ValueError:
                raise damaged("a record line has no live id (edited by hand?)", self.source(entity)) from None
        return ids.get(id_token)

    def id_tokens_by_key(self, entity: str) -> Iterator[tuple[str, str]]:
        """(key token, id token) of every record of `entity`, in no order (the id tokens read off the
        lines' text as they go, not kept)."""
        for key, line in self._lines.get(entity, {}).items():
            try:
                yield key, _id_of(line)
            except ValueError:
                raise damaged(f"the line of the record {key[:80]} has no live id (edited by hand?)",
                              self.source(entity)) from None

    def id_tokens(self, entity: str) -> frozenset[str]:
        """The id tokens of every record of `entity`."""
        if entity not in self._ids:
            self.key_for_id(entity, "")
        return frozenset(self._ids[entity])

    def lines(self, entity: str) -> Iterator[HistoryLine]:
        """Every line of `entity`, in key order."""
        for key in self.keys(entity):
            line = self.get(entity, key)
            if line is not None:
                yield line

    def key_for_former(self, entity: str, key_token: str) -> str | None:
        """The key token of the record that had the key `key_token` before (renumbered, or a
        duplicate taken as it), or None. When two did, the one of the greatest key token (the same
        answer whatever the order lines were read in)."""
        formers = self._formers.get(entity)
        if formers is None:
            formers = self._formers[entity] = {}
            for key, line in self._lines.get(entity, {}).items():
                for former in _former_of(line):
                    if former not in formers or formers[former] < key:  # two had it: the greatest key, always
                        formers[former] = key
        return formers.get(key_token)

    def has_former_keys(self, entity: str) -> bool:
        """Whether any record of `entity` had another key before."""
        self.key_for_former(entity, "")
        return bool(self._formers[entity])

    def with_lines(self, entity: str, lines: Iterable[HistoryLine], removed: Iterable[str] = ()) -> Snapshot:
        """A snapshot with `lines` set over this one's (a line replaces the line of its key), and the
        lines of the keys `removed` gone (a renumbered record's line moved to its new key)."""
        entities: dict[str, Mapping[str, str | HistoryLine]] = dict(self._lines)
        changed = dict(self._lines.get(entity, {}))
        for key in removed:
            changed.pop(key, None)
        changed.update((line.key, line) for line in lines)
        entities[entity] = changed
        return Snapshot(entities, self._tables, self.sources)

    def raw_items(self, entity: str) -> tuple[Tables | None, Mapping[str, str | HistoryLine]]:
        return self._tables.get(entity), self._lines.get(entity, {})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Snapshot):
            return NotImplemented
        return self.entities() == other.entities() and all(
            list(self.lines(e)) == list(other.lines(e)) for e in self.entities())

    __hash__ = None  # type: ignore[assignment]


def _id_of(line: str | HistoryLine) -> str:
    if isinstance(line, HistoryLine):
        return line.live_id
    start = line.index("\t") + 1
    return line[start:line.index("\t", start)]


def _former_of(line: str | HistoryLine) -> tuple[str, ...]:
    if isinstance(line, HistoryLine):
        return line.former_keys
    if '\t["' not in line:  # only the former keys column starts so after a tab: most lines have none
        return ()
    parts = line.split("\t", FIRST_FIELD)
    if len(parts) <= SHORTEST or not parts[SHORTEST]:
        return ()
    return tuple(str(k) for k in json.loads(parts[SHORTEST]))


def parse_line(text: str, tables: Tables) -> HistoryLine:
    """The record a snapshot line holds."""
    parts = text.split("\t")
    key, live_id, time, user = parts[:4]
    fields: dict[str, FieldMark] = {}
    owners = tables.owners
    for name, column in zip(tables.fields, parts[FIRST_FIELD:], strict=False):
        if column:
            fields[name] = parse_column(column, owners)
    former = parts[4] if len(parts) > 4 else ""
    return HistoryLine(key, live_id, int(time) if time else None,
                       tables.users[int(user)] if user else None, fields,
                       tuple(str(k) for k in json.loads(former)) if former else ())


def parse_column(column: str, owners: tuple[Owner, ...]) -> FieldMark:
    """One field's mark from its column text."""
    dot = column.index(".")
    at = column.find("@", dot)
    edited = None if at < 0 else parse_edited(column[at + 1:])
    written_text = column[dot + 1:] if at < 0 else column[dot + 1:at]
    if written_text[:1] == "[":
        return FieldMark(owners[int(column[:dot])], frozenset(written_text[1:].split(",")) - {""}, edited)
    return FieldMark(owners[int(column[:dot])], written_text, edited)


def edited_text(edited: Edited | None) -> str:
    """The '@time:user' end of a field's column ("" when the field has no platform edit noted)."""
    if edited is None:
        return ""
    time, user = edited
    return f"@{int(time)}" if user is None else f"@{int(time)}:{compact_id(user)}"


def parse_edited(text: str) -> Edited:
    time, colon, user = text.partition(":")
    return int(time), expand_id(user) if colon else None


def former_text(former_keys: tuple[str, ...]) -> str:
    """The former keys column: a JSON list of key tokens, "" for none."""
    return compact_json(list(former_keys)) if former_keys else ""


def compact_json(value: object) -> str:
    """A value as the snapshot's files hold JSON: no spaces, no escapes of non-ASCII text."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def unreadable_line(text: str, path: Path) -> HistoryError:
    """The error for a record line of the snapshot file `path` that cannot be parsed."""
    return damaged(f"the line of the record {text.split(chr(9), 1)[0][:80]} cannot be read (edited by hand?)", path)
