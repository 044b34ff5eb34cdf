"""SQLite storage of the sandbox: every record of every collection in one table.

A record's JSON body is stored as text (lists are answered by splicing the stored texts, never
re-encoding them); the columns beside it are what lookups need: `seq` (creation order and the
keyset paging position), `code` (the entity's lookup key: code, external_id, name...), `ukey`
(a uniqueness namespace + value, unique per institution), `ref` (the one reference lists filter
and `children` look up by: parent id, applicant id, ...). Record counts per collection are kept in
a table so `total` costs the same on page 1 and page 1,000. There are no deletes.

Only the thread running the app's event loop touches the connection.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    institution TEXT NOT NULL,
    collection TEXT NOT NULL,
    id TEXT NOT NULL UNIQUE,
    code TEXT,
    ukey TEXT,
    ref TEXT,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_page ON records(institution, collection, seq);
CREATE INDEX IF NOT EXISTS records_code ON records(institution, collection, code);
CREATE UNIQUE INDEX IF NOT EXISTS records_ukey ON records(institution, ukey) WHERE ukey IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_ref ON records(institution, ref, seq) WHERE ref IS NOT NULL;
CREATE TABLE IF NOT EXISTS counts (
    institution TEXT NOT NULL,
    collection TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (institution, collection)
);
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    institution TEXT NOT NULL,
    body TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class Row:
    """One stored record: its identity columns and its decoded body."""

    seq: int
    collection: str
    body: dict[str, Any]


@dataclass(frozen=True)
class Columns:
    """The indexed columns of a record, derived from its body by the entity rules."""

    code: str | None
    ukey: str | None
    ref: str | None


Filter = tuple[str, str]  # (SQL expression over a column or json_extract, value)


def _dumps(body: dict[str, Any]) -> str:
    return json.dumps(body, separators=(",", ":"))


class Store:
    """Records of all institutions in one SQLite database (a file or `:memory:`)."""

    def __init__(self, path: str) -> None:
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        if path != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def is_empty(self) -> bool:
        return self._db.execute("SELECT 1 FROM records LIMIT 1").fetchone() is None

    def transaction(self) -> _transaction:
        """One transaction around several writes (a seed): all of them or none."""
        return _transaction(self._db)

    def insert(self, institution: str, collection: str, body: dict[str, Any], cols: Columns) -> None:
        with _transaction(self._db):
            self._insert(institution, collection, body, cols)

    def _insert(self, institution: str, collection: str, body: dict[str, Any], cols: Columns) -> None:
        self._db.execute(
            "INSERT INTO records (institution, collection, id, code, ukey, ref, body) VALUES (?,?,?,?,?,?,?)",
            (institution, collection, body["id"], cols.code, cols.ukey, cols.ref, _dumps(body)),
        )
        self._db.execute(
            "INSERT INTO counts (institution, collection, n) VALUES (?,?,1) "
            "ON CONFLICT(institution, collection) DO UPDATE SET n = n + 1",
            (institution, collection),
        )

    def update(self, record_id: str, body: dict[str, Any], cols: Columns) -> None:
        # One statement: atomic on its own (autocommit), so no BEGIN ... COMMIT around it.
        self._db.execute(
            "UPDATE records SET code = ?, ukey = ?, ref = ?, body = ? WHERE id = ?",
            (cols.code, cols.ukey, cols.ref, _dumps(body), record_id),
        )

    def get(self, institution: str, collections: Sequence[str], record_id: str) -> Row | None:
        row = self._db.execute(
            "SELECT seq, collection, body FROM records WHERE id = ? AND institution = ?", (record_id, institution)
        ).fetchone()
        if row is None or row[1] not in collections:
            return None
        return Row(row[0], row[1], json.loads(row[2]))

    def get_by_code(self, institution: str, collection: str, code: str) -> Row | None:
        row = self._db.execute(
            "SELECT seq, collection, body FROM records WHERE institution = ? AND collection = ? AND code = ? "
            "ORDER BY seq LIMIT 1",
            (institution, collection, code),
        ).fetchone()
        return None if row is None else Row(row[0], row[1], json.loads(row[2]))

    def get_by_ukey(self, institution: str, ukey: str) -> Row | None:
        row = self._db.execute(
            "SELECT seq, collection, body FROM records WHERE institution = ? AND ukey = ?", (institution, ukey)
        ).fetchone()
        return None if row is None else Row(row[0], row[1], json.loads(row[2]))

    def page(
        self, institution: str, collection: str, filters: Sequence[Filter], after: int, limit: int
    ) -> list[tuple[int, str]]:
        """Up to `limit` (seq, body text) of the collection after position `after`, in creation order."""
        where, params = _where(institution, collection, filters)
        return self._db.execute(
            f"SELECT seq, body FROM records WHERE {where} AND seq > ? ORDER BY seq LIMIT ?",
            (*params, after, limit),
        ).fetchall()

    def count(self, institution: str, collection: str, filters: Sequence[Filter]) -> int:
        if not filters:
            row = self._db.execute(
                "SELECT n FROM counts WHERE institution = ? AND collection = ?", (institution, collection)
            ).fetchone()
            return 0 if row is None else int(row[0])
        where, params = _where(institution, collection, filters)
        return int(self._db.execute(f"SELECT count(*) FROM records WHERE {where}", params).fetchone()[0])

    def by_ref(self, institution: str, collections: Sequence[str], ref: str) -> list[Row]:
        """Records of these collections whose reference column is `ref`, in creation order."""
        marks = ",".join("?" * len(collections))
        rows = self._db.execute(
            f"SELECT seq, collection, body FROM records WHERE institution = ? AND ref = ? "
            f"AND collection IN ({marks}) ORDER BY seq",
            (institution, ref, *collections),
        ).fetchall()
        return [Row(r[0], r[1], json.loads(r[2])) for r in rows]

    def add_outbox(self, institution: str, message: dict[str, Any]) -> None:
        with _transaction(self._db):
            self._db.execute("INSERT INTO outbox (institution, body) VALUES (?, ?)", (institution, _dumps(message)))

    def outbox(self, institution: str) -> list[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT institution, body FROM outbox WHERE institution = ? ORDER BY seq", (institution,)
        ).fetchall()
        return [{"institution": r[0], **json.loads(r[1])} for r in rows]


def holds_only_defaults(path: Path) -> bool:
    """True when the SQLite file at `path` holds no records but the roles and tags every sandbox
    starts with (read-only; a file that is not a sandbox database counts as holding records)."""
    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            row = db.execute("SELECT 1 FROM records WHERE collection NOT IN ('roles', 'tags') LIMIT 1").fetchone()
    except sqlite3.Error:
        return False
    return row is None


def _where(institution: str, collection: str, filters: Sequence[Filter]) -> tuple[str, tuple[str, ...]]:
    clauses = ["institution = ?", "collection = ?"] + [f"{expr} = ?" for expr, _ in filters]
    return " AND ".join(clauses), (institution, collection, *(value for _, value in filters))


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error; inside an open transaction, nothing."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._outer = False

    def __enter__(self) -> None:
        self._outer = not self._db.in_transaction
        if self._outer:
            self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self._outer:
            self._db.execute("COMMIT" if exc_type is None else "ROLLBACK")
