"""The snapshot's files: a snapshot rendered and written (one file per entity, split by key range
when large), and read back, each file checked before its lines are kept.

The format of a file is `loader.history.snapshot`'s. Writing renders the lines an entity holds as
text against tables naming exactly what they use; lines read and not changed are written as they
were read, so an entity's bytes change only where its records did.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from loader.history.files import MAX_FILE_BYTES as MAX_READ_BYTES
from loader.history.files import checked_folder, damaged, read_bounded, regular_files, write_atomically
from loader.history.lines import HistoryLine, Owner
from loader.history.snapshot import (
    FIRST_FIELD,
    MAGIC,
    MAGIC_PREFIX,
    MAX_FILE_BYTES,
    READABLE,
    SHORTEST,
    SUFFIX,
    Snapshot,
    Tables,
    compact_json,
    edited_text,
    former_text,
    parse_line,
    unreadable_line,
)


def render_line(line: HistoryLine, tables: Tables, index: _Index) -> str:
    """A record as one snapshot line, against `tables`."""
    user = "" if line.updated_user is None else str(index.users[line.updated_user])
    time = "" if line.updated_time is None else str(line.updated_time)
    columns = [line.key, line.live_id, time, user, former_text(line.former_keys)]
    for name in tables.fields:
        mark = line.fields.get(name)
        if mark is None:
            columns.append("")
            continue
        written = mark.written if isinstance(mark.written, str) else "[" + ",".join(sorted(mark.written))
        columns.append(f"{index.owners[mark.owner]}.{written}{edited_text(mark.edited)}")
    while columns[-1] == "" and len(columns) > SHORTEST:
        columns.pop()
    return "\t".join(columns)


@dataclass(frozen=True)
class _Index:
    owners: Mapping[Owner, int]
    users: Mapping[str, int]


def tables_of(lines: Iterable[HistoryLine]) -> Tables:
    """The tables that name exactly what `lines` use, each sorted."""
    fields: set[str] = set()
    owners: set[Owner] = set()
    users: set[str] = set()
    for line in lines:
        fields.update(line.fields)
        owners.update(mark.owner for mark in line.fields.values())
        if line.updated_user is not None:
            users.add(line.updated_user)
    return Tables(tuple(sorted(fields)), tuple(sorted(owners)), tuple(sorted(users)))


def render_header(entity: str, tables: Tables) -> list[str]:
    rows = [f"{MAGIC}\t{entity}"]
    rows += [f"#field\t{compact_json(name)}" for name in tables.fields]
    rows += [f"#owner\t{compact_json([o.file, o.block])}" for o in tables.owners]
    rows += [f"#user\t{compact_json(user)}" for user in tables.users]
    return rows


def render_entity(snapshot: Snapshot, entity: str) -> tuple[list[str], list[str]]:
    """(header rows, record lines sorted by key) for `entity`; unchanged raw lines are kept as read
    when nothing new needs the tables changed."""
    tables, items = snapshot.raw_items(entity)
    if tables is not None:
        raw = [v for v in items.values() if isinstance(v, str)]
        parsed = [v for v in items.values() if isinstance(v, HistoryLine)]
        if _used_by_raw(raw, tables, tables_of(parsed)) == tables:
            index = _Index({o: i for i, o in enumerate(tables.owners)}, {u: i for i, u in enumerate(tables.users)})
            text = {**{line.key: render_line(line, tables, index) for line in parsed},
                    **{k: v for k, v in items.items() if isinstance(v, str)}}
            return render_header(entity, tables), [text[k] for k in sorted(text)]
    lines = [snapshot.get(entity, key) for key in sorted(items)]
    present = [line for line in lines if line is not None]
    fresh = tables_of(present)
    index = _Index({o: i for i, o in enumerate(fresh.owners)}, {u: i for i, u in enumerate(fresh.users)})
    return render_header(entity, fresh), [render_line(line, fresh, index) for line in present]


def _used_by_raw(rows: list[str], tables: Tables, new: Tables) -> Tables:
    """The tables naming exactly what raw `rows` (against `tables`) and the names in `new` use: when
    it is `tables` itself, the rows can be written as read and the output is still a fresh render's."""
    columns: set[int] = set()
    owners: set[str] = set()
    users: set[str] = set()
    for row in rows:
        parts = row.split("\t")
        users.add(parts[3])
        for column, text in enumerate(parts[FIRST_FIELD:]):
            if text:
                columns.add(column)
                owners.add(text[:text.index(".")])
    return Tables(
        tuple(sorted({tables.fields[c] for c in columns} | set(new.fields))),
        tuple(sorted({tables.owners[int(o)] for o in owners} | set(new.owners))),
        tuple(sorted({tables.users[int(u)] for u in users - {""}} | set(new.users))),
    )


def shard_texts(header: list[str], lines: list[str], max_bytes: int) -> list[str]:
    """The lines split into files of at most `max_bytes` each (a line never split), by key range."""
    head = "".join(row + "\n" for row in header)
    head_size = len(head.encode())
    shards: list[list[str]] = [[]]
    size = head_size
    for line in lines:
        line_size = len(line.encode()) + 1
        if shards[-1] and size + line_size > max_bytes:
            shards.append([])
            size = head_size
        shards[-1].append(line)
        size += line_size
    return [head + "".join(line + "\n" for line in shard) for shard in shards]


def shard_paths(folder: Path, entity: str, count: int) -> list[Path]:
    if count == 1:
        return [folder / f"{entity}{SUFFIX}"]
    return [folder / f"{entity}.{n:03d}{SUFFIX}" for n in range(count)]


def write_snapshot(folder: Path, snapshot: Snapshot, *, max_bytes: int = MAX_FILE_BYTES) -> list[Path]:
    """Write `snapshot` under `folder` (one or more files per entity; stale files removed)."""
    if not checked_folder(folder):
        folder.mkdir(parents=True)
    written: list[Path] = []
    for entity in snapshot.entities():
        header, lines = render_entity(snapshot, entity)
        texts = shard_texts(header, lines, max_bytes)
        for path, text in zip(shard_paths(folder, entity, len(texts)), texts, strict=True):
            write_atomically(path, text.encode())
            written.append(path)
    for stale in set(folder.glob(f"*{SUFFIX}")) - set(written):
        stale.unlink()
    return written


def read_snapshot(folder: Path) -> Snapshot:
    """The snapshot under `folder` (empty when there is none). A file that is not a regular file,
    is not UTF-8 or is not a snapshot file is a `HistoryError` naming it (`loader.history.files`);
    a record line is parsed when asked for (`Snapshot.get`), its damage told then."""
    entities: dict[str, dict[str, str | HistoryLine]] = {}
    tables: dict[str, Tables] = {}
    sources: dict[str, Path] = {}
    for path in regular_files(folder, f"*{SUFFIX}"):
        entity, shard_tables, records = _read_shard(path)
        lines = entities.setdefault(entity, {})
        sources.setdefault(entity, path)
        if entity not in tables:
            tables[entity] = shard_tables
            lines.update(records)
        elif tables[entity] == shard_tables:
            lines.update(records)
        else:  # a shard with its own tables (edited by hand): its lines are parsed now
            lines.update((k, _parsed(v, shard_tables, path)) for k, v in records.items())
    return Snapshot(entities, tables, sources)


def _read_shard(path: Path) -> tuple[str, Tables, dict[str, str]]:
    """(entity, tables, record lines by key token) of one snapshot file, its header checked."""
    rows = _text_of(path).split("\n")
    entity, version = _magic(rows[0], path)
    tables, first = _tables(rows, path)
    records = _records(rows, first, path)
    if version == 1:
        records = {key: _from_format_1(row) for key, row in records.items()}
    return entity, tables, records


def _text_of(path: Path) -> str:
    data = read_bounded(path, MAX_READ_BYTES)
    try:
        return (data or b"").decode("utf-8")
    except UnicodeDecodeError as error:
        raise damaged(f"is not UTF-8 text (byte {error.start})", path) from None


def _magic(row: str, path: Path) -> tuple[str, int]:
    """(entity, format) a snapshot file's first row names; a `HistoryError` for a format not read."""
    magic, _, entity = row.partition("\t")
    version = magic.removeprefix(MAGIC_PREFIX)
    if not magic.startswith(MAGIC_PREFIX) or not version.isdigit() or not entity:
        raise damaged("is not a snapshot file of the loader's history", path)
    if int(version) not in READABLE:
        raise damaged(f"is a snapshot of history format {version}, which this release of the loader cannot read",
                      path, hint="upgrade the loader to the release that wrote it")
    return entity, int(version)


def _tables(rows: list[str], path: Path) -> tuple[Tables, int]:
    """The tables a snapshot file's rows name, and the index of its first record row."""
    named: dict[str, list[object]] = {"#field": [], "#owner": [], "#user": []}
    first = 1
    try:
        while first < len(rows) and rows[first].startswith("#"):
            kind, _, value = rows[first].partition("\t")
            named.setdefault(kind, []).append(json.loads(value))
            first += 1
        return Tables(tuple(_text(n) for n in named["#field"]), tuple(_owner(o) for o in named["#owner"]),
                      tuple(_text(u) for u in named["#user"])), first
    except (ValueError, TypeError) as error:
        raise damaged(f"line {first + 1} is not a snapshot table row ({error})", path) from None


def _records(rows: list[str], first: int, path: Path) -> dict[str, str]:
    """The record rows from `first` on, by key token (kept as text: parsed when asked for)."""
    try:
        return {row[:row.index("\t")]: row for row in rows[first:] if row}
    except ValueError:
        number = next(n for n, row in enumerate(rows[first:], first + 1) if row and "\t" not in row)
        raise damaged(f"line {number} is not a record line of the snapshot (edited by hand?)", path) from None


def _from_format_1(row: str) -> str:
    """A format 1 line as format 2 text: an empty former keys column before its fields."""
    parts = row.split("\t", SHORTEST)
    return row if len(parts) <= SHORTEST else "\t".join(parts[:SHORTEST]) + "\t\t" + parts[SHORTEST]


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not text")
    return value


def _owner(value: object) -> Owner:
    if not isinstance(value, list) or len(value) != 2:
        raise TypeError(f"{value!r} is not an owner [file, block]")
    return Owner(_text(value[0]), _text(value[1]))


def _parsed(text: str, tables: Tables, path: Path) -> HistoryLine:
    try:
        return parse_line(text, tables)
    except (ValueError, IndexError, OverflowError):
        raise unreadable_line(text, path) from None
