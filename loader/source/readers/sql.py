"""SQL queries -> rows of cell values, read through SQLAlchemy 2 (the `loader[sql]` extra).

A `sql:` source is one `SELECT` or `WITH … SELECT` (`sql_statement.check_select`, before any
connection is made), run with bound `params:` in a transaction that is read-only where the
dialect has one, under a statement timeout:

- PostgreSQL: `SET TRANSACTION READ ONLY` and `SET LOCAL statement_timeout`;
- Oracle: `SET TRANSACTION READ ONLY` and the driver's `call_timeout`;
- MySQL/MariaDB: `SET TRANSACTION READ ONLY` and `max_execution_time`;
- SQLite: the file opened read-only (`mode=ro`, so a mistyped path is no new empty database),
  `PRAGMA query_only`, and a progress handler that interrupts the query at the timeout.

Rows are streamed (`stream_results`: a server-side cursor where the driver has one) a batch at a
time. The database URL comes from an environment variable (`url: {env: NAME}`) whenever it holds
a password; it is never shown: a source is described by its name and its URL with the password
masked. `sqlite:///x.db` is relative to the mapping file's folder.

What a value gives, by the cell rules of the other readers: text as it is (empty text is an empty
cell); whole numbers, and `Decimal`s and floats without a fraction, as `int`; other `Decimal`s as a
`float` when the float says the same number, else as their exact text ("0.10000000000000000001");
a date-time at midnight without a time zone as a `date`, other date-times (time zone kept) and
dates as they are; an interval as ISO 8601 duration text ("PT36H30M"); UUIDs and the like as their
text. Binary, array and JSON values are refused, naming the column (select a text form of them).

The header row (row 1) holds the query's column names; a mapping's column is matched to them
case-insensitively (`UNIT_CODE` is `unit_code`), and `read` names the header by the mapping's
spelling so every consumer matches it exactly. Records are rows 2, 3, ...
"""

from __future__ import annotations

import time as clock
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loader.config import EnvRef
from loader.errors import MappingError, SheetError
from loader.redaction import register_secret
from loader.source.readers import limits
from loader.source.readers.rows import CellValue, SheetData, SheetRow, is_blank
from loader.source.readers.sql_statement import check_select
from loader.source.readers.xlsx import iso_duration

if TYPE_CHECKING:
    from sqlalchemy.engine import URL, Connection

DEFAULT_TIMEOUT_S = 300.0
BATCH_ROWS = 2_000
_DRIVERS = {"postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg", "oracle": "oracle+oracledb"}
_EXTRAS = {"postgresql": "loader[postgres]", "oracle": "loader[oracle]"}


@dataclass(frozen=True)
class SqlSource:
    """A `sql:` source as the mapping gives it: its name, the query, where the database is."""

    name: str
    sql: str
    url: str | EnvRef  # a literal URL only without a password
    base: Path  # the mapping file's folder: `sqlite:///x.db` is relative to it
    params: Mapping[str, Any] = field(default_factory=dict)
    timeout_s: float = DEFAULT_TIMEOUT_S


def describe(source: SqlSource) -> str:
    """The source as messages and reports name it, without credentials: `handbook (query)`.
    Reading no environment variable, it is what offline commands can always show."""
    return f"{source.name} (query)"


def describe_database(source: SqlSource) -> str:
    """The source with its database: `handbook (query on postgresql+psycopg://loader:***@db/cur)`."""
    try:
        url = database_url(source)
    except (MappingError, SheetError):
        return describe(source)
    return f"{source.name} (query on {url.render_as_string(hide_password=True)})"


def database_url(source: SqlSource) -> URL:
    """The SQLAlchemy URL the source names, with the driver the extras install and a SQLite file
    resolved against the mapping's folder and opened read-only. Its password is registered as a
    secret (never printed)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    text = source.url.read(f"the source {source.name}", describe(source)) if isinstance(source.url, EnvRef) \
        else source.url
    try:
        url = make_url(text)
    except ArgumentError:
        raise SheetError("the database URL is not a SQLAlchemy URL", where=describe(source),
                         hint="e.g. postgresql://user@host/db, oracle+oracledb://user@host/?service_name=X, "
                              "sqlite:///handbook.db") from None
    if url.password:
        register_secret(str(url.password))
        if not isinstance(source.url, EnvRef):
            raise MappingError("a database URL written in the mapping must not hold a password",
                               where=describe(source), hint="write url: {env: NAME} and export NAME with the URL")
    url = url.set(drivername=_DRIVERS.get(url.drivername, url.drivername))
    if url.get_backend_name() == "sqlite":
        url = _read_only_sqlite(url, source)
    return url


def _read_only_sqlite(url: URL, source: SqlSource) -> URL:
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        raise SheetError("a SQLite source must name a database file", where=describe(source),
                         hint="e.g. url: sqlite:///handbook.db (relative to the mapping file)")
    path = Path(database).expanduser()
    path = path if path.is_absolute() else source.base / path
    if not path.is_file():
        raise SheetError(f"no SQLite database file at {path}", where=describe(source),
                         hint="check url: (a relative path is relative to the mapping file's folder)")
    return url.set(database=f"file:{path.resolve().as_posix()}?mode=ro", query={"uri": "true"})


def read(source: SqlSource, columns: Sequence[str] = ()) -> SheetData:
    """Run the query; row 1 the column names (in the spelling of `columns` where one matches
    case-insensitively), then one row a record. Raises SheetError naming the source for a query
    that is refused or fails, or a column of `columns` the query lacks. No rows is no error here: the
    plan tells whether it is one (`allow_empty:`, against the history)."""
    where = describe(source)
    check_select(source.sql, where)
    _check_installed(where)
    names, rows = _run(source, where)
    header = _header(names, columns, where)
    return SheetData(where, None, (SheetRow(1, header), *rows))


def _check_installed(where: str) -> None:
    """SQLAlchemy is the `loader[sql]` extra: without it a query is an error saying what to install."""
    try:
        import sqlalchemy  # noqa: F401
    except ImportError:
        raise SheetError("reading a query needs SQLAlchemy, which is not installed", where=where,
                         hint="pip install 'loader[sql]' (or 'loader[postgres]', 'loader[oracle]')") from None


def _run(source: SqlSource, where: str) -> tuple[tuple[str, ...], list[SheetRow]]:
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import SQLAlchemyError

    url = database_url(source)
    try:
        engine = create_engine(url, poolclass=_null_pool())
    except ModuleNotFoundError as exc:
        extra = _EXTRAS.get(url.get_backend_name(), "the driver for " + url.get_backend_name())
        raise SheetError(f"the database driver is not installed ({exc.name})", where=where,
                         hint=f"pip install '{extra}'") from None
    except SQLAlchemyError as exc:
        raise SheetError(f"cannot use the database URL: {exc}", where=where) from None
    try:
        with engine.connect() as connection:
            _guard(connection, source.timeout_s)
            result = connection.execution_options(stream_results=True).execute(text(source.sql), dict(source.params))
            names = tuple(result.keys())
            return names, list(_rows(result.partitions(BATCH_ROWS), names, where))
    except SQLAlchemyError as exc:
        raise SheetError(f"the query failed: {_database_message(exc)}", where=where,
                         hint="run the query in the database's own client to see it fail there") from None
    finally:
        engine.dispose()


def _null_pool() -> Any:
    from sqlalchemy.pool import NullPool

    return NullPool


def _database_message(exc: Exception) -> str:
    """The database's own words, without SQLAlchemy's echo of the statement and its parameters."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _guard(connection: Connection, timeout_s: float) -> None:
    """Make the transaction read-only and give the query its timeout, per dialect."""
    dialect = connection.dialect.name
    milliseconds = max(int(timeout_s * 1000), 1)
    if dialect == "postgresql":
        connection.exec_driver_sql("SET TRANSACTION READ ONLY")
        connection.exec_driver_sql(f"SET LOCAL statement_timeout = {milliseconds}")
    elif dialect == "oracle":
        connection.exec_driver_sql("SET TRANSACTION READ ONLY")
        connection.connection.driver_connection.call_timeout = milliseconds  # type: ignore[union-attr]
    elif dialect in ("mysql", "mariadb"):  # before the transaction's first statement: it applies to it
        connection.exec_driver_sql("SET TRANSACTION READ ONLY")
        connection.exec_driver_sql(f"SET SESSION max_execution_time = {milliseconds}")
    elif dialect == "sqlite":
        raw = connection.connection.driver_connection
        connection.exec_driver_sql("PRAGMA query_only = ON")
        deadline = clock.monotonic() + timeout_s
        raw.set_progress_handler(lambda: int(clock.monotonic() > deadline), 10_000)  # type: ignore[union-attr]


def _rows(batches: Iterator[Sequence[Sequence[Any]]], names: tuple[str, ...], where: str) -> Iterator[SheetRow]:
    cells = limits.CELLS.value()
    width = max(len(names), 1)
    number = 1
    for batch in batches:
        if (number - 1 + len(batch)) * width > cells:
            raise limits.CELLS.refuse(f"the query gives more than {cells // width:,} rows of {width} columns", where)
        for raw in batch:
            number += 1
            # Text, whole numbers and dates are cells as they are, floats made whole where they are;
            # only the rest is converted by a call.
            values = tuple([value if type(value) in _AS_THEY_ARE and value != "" else
                            _whole(value) if type(value) is float else
                            cell_value(value, names, index, where) for index, value in enumerate(raw)])
            if not all(is_blank(v) for v in values):
                yield SheetRow(number, values)


_AS_THEY_ARE = frozenset({str, int, bool, date, time})


def _whole(value: float) -> int | float:
    return int(value) if value.is_integer() and abs(value) < 2**63 else value


def cell_value(value: object, names: Sequence[str], index: int, where: str) -> CellValue:
    """One database value as a cell value (see the module docstring)."""
    if value is None or isinstance(value, bool | int | date | time):
        return value if not isinstance(value, datetime) else _datetime(value)
    if isinstance(value, str):
        return value or None
    if isinstance(value, float):
        return _whole(value)
    if isinstance(value, Decimal):
        return decimal_value(value)
    if isinstance(value, timedelta):
        return iso_duration(value)
    if isinstance(value, bytes | bytearray | memoryview | list | tuple | dict):
        raise SheetError(f"the column {names[index]!r} holds {type(value).__name__} values, not text, numbers "
                         "or dates", where=where, hint="select a text form of it (e.g. CAST(... AS text))")
    return str(value)


def _datetime(value: datetime) -> date | datetime:
    return value.date() if value.time() == time(0) and value.tzinfo is None else value


def decimal_value(value: Decimal) -> int | float | str:
    """A Decimal as a cell value: a whole number as `int`, a float when it says the same number,
    else the exact text (so no digit is lost). NaN and infinities are their text."""
    if not value.is_finite():
        return str(value)
    if value == value.to_integral_value():
        return int(value)
    number = float(value)
    return number if Decimal(repr(number)) == value else format(value.normalize(), "f")


def _header(names: tuple[str, ...], columns: Sequence[str], where: str) -> tuple[CellValue, ...]:
    """The query's column names, each in the spelling of the mapping's column that names it."""
    folded: dict[str, list[int]] = {}
    for index, name in enumerate(names):
        folded.setdefault(name.casefold(), []).append(index)
    header: list[CellValue] = list(names)
    missing = []
    for column in columns:
        found = folded.get(column.casefold(), [])
        if len(found) > 1:
            both = ", ".join(repr(names[i]) for i in found)
            raise SheetError(f"the column {column!r} matches several of the query's columns: {both}", where=where,
                             hint="give the columns distinct names with AS")
        if not found:
            missing.append(column)
        else:
            header[found[0]] = column
    if missing:
        raise SheetError(f"the query has no column {', '.join(map(repr, missing))}; its columns are: "
                         f"{', '.join(names)}", where=where, hint="name the column in the SELECT list (or use AS)")
    return tuple(header)

