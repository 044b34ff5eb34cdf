"""In-memory tables: rows given as a list of dicts (the Python API, `loader test` cases, or a
mapping's `sources: {NAME: {table: [...]}}`).

A table is read as a sheet whose header row (row 1) holds its columns, in the order they are first
seen, and whose rows follow in the order given; a key a row lacks is an empty cell. A value must be
one cell's value (text, a number, a truth value, a date or time, or nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from loader.errors import SheetError
from loader.places import CellRef
from loader.source.readers.kinds import Source, SourceKind, Wanted, no_files, options_of, values_digest
from loader.source.readers.rows import CellValue, SheetData, SheetRow

NAME = "table"
_CELL_TYPES = (str, int, float, bool, date, datetime, time)


def table(name: str, rows: Iterable[Mapping[str, Any]], *, columns: Sequence[str] = ()) -> Source:
    """A source of the rows given, named `name` in places and reports. `columns`: the table's
    columns, in order, before any a row adds (a frame's columns, also when it has no rows)."""
    return Source(NAME, name, options_of({"columns": tuple(columns) or None}), name=name, given=tuple(rows))


def _described(source: Source) -> str:
    return f"{source.name or source.location} ({NAME})"


def _from_mapping(name: str, entry: dict[str, Any], folder: Path) -> Source:
    return table(name, entry[NAME] or ())


def _read(source: Source, display: str, sheet: str | None, wanted: Wanted) -> SheetData:
    rows: tuple[Any, ...] = source.given or ()
    columns: dict[str, int] = {str(column): i for i, column in enumerate(source.option("columns", ()))}
    for number, row in enumerate(rows, start=2):
        if not isinstance(row, Mapping):
            raise SheetError(f"row {number - 1} of the table is not a map of columns to values", where=display,
                             hint="give each row as {column: value, ...}")
        for column in row:
            columns.setdefault(str(column), len(columns))
    body = [SheetRow(number, _values(row, columns, display, number)) for number, row in enumerate(rows, start=2)]
    header = SheetRow(1, tuple(columns))
    return SheetData(display, None, (header, *(row for row in body if any(v is not None for v in row.values))))


def _values(row: Mapping[str, Any], columns: dict[str, int], display: str, number: int) -> tuple[CellValue, ...]:
    values: list[CellValue] = [None] * len(columns)
    for column, value in row.items():
        if value is not None and not isinstance(value, _CELL_TYPES):
            raise SheetError(f"column {column!r} holds a {type(value).__name__}, not one cell's value",
                             where=CellRef(display, None, column, number, record=f"record {number - 1}"),
                             hint="give text, a number, true/false, a date or nothing")
        values[columns[str(column)]] = value
    return tuple(values)


KIND = SourceKind(
    NAME,
    _read,
    describe=_described,
    files=no_files,
    in_child=False,  # its rows are in this process already
    fingerprint=values_digest,
    places="record",
    results="records",
    from_mapping=_from_mapping,
)
