"""Tables a program holds in memory as the rows of a `table` source: the Python API's sources.

A pandas or polars DataFrame, an Arrow table (or record batch), or a list of dicts. None of pandas,
polars or pyarrow is imported here: a frame is told by the package its type comes from and read
through its own methods, so the command line, which is never given one, never loads them.

What a value gives, by the cell rules of the other readers (`loader.source.readers.sql`):

- None, NaN, `pd.NA`, `NaT` and the nulls of polars and Arrow are empty cells;
- whole numbers, and floats without a fraction, are whole numbers (a pandas integer column with a
  gap holds floats: its 10 is "10", never "10.0"); NumPy scalars are the Python values they hold;
- a date-time at midnight without a time zone is a date, others keep their time and zone, and a
  mapping's `type:` (date, epoch_ms) decides what they become, as for a cell;
- a `Decimal` is a whole number, a float saying the same number, or else its exact text;
- a duration is ISO 8601 text ("PT36H30M"); a categorical's values are text.

A frame's index is not a column (`reset_index()` makes it one). Anything else that is not one
cell's value (a list, a dict, bytes) is refused by the table kind, naming its column.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from loader.errors import SheetError
from loader.source.readers.kinds import Source
from loader.source.readers.sql import decimal_value
from loader.source.readers.table import table
from loader.source.readers.xlsx import iso_duration

_NULL_TYPES = frozenset({"NAType", "NaTType"})  # pandas' missing values, told by name: pandas is not imported


def table_of(name: str, data: Any) -> Source:
    """A `table` source named `name` of `data`: a pandas or polars DataFrame, an Arrow table or
    record batch, or an iterable of dicts (column -> value)."""
    columns, rows = _columns_and_rows(name, data)
    return table(name, rows, columns=columns)


def _columns_and_rows(name: str, data: Any) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    package = type(data).__module__.partition(".")[0]
    if package == "pandas" and hasattr(data, "columns") and hasattr(data, "dtypes"):
        names = [str(column) for column in data.columns]
        values = [_pandas_column(data.iloc[:, i]) for i in range(len(names))]
    elif package == "polars" and hasattr(data, "get_column"):
        names = [str(column) for column in data.columns]
        values = [[cell_of(v) for v in data.get_column(column).to_list()] for column in data.columns]
    elif package == "pyarrow" and hasattr(data, "column_names"):
        names = [str(column) for column in data.column_names]
        values = [_arrow_column(data.column(i)) for i in range(len(names))]
    elif isinstance(data, Iterable) and not isinstance(data, str | bytes | Mapping):
        return (), [_row(name, number, row) for number, row in enumerate(data, start=1)]
    else:
        raise SheetError(f"table {name!r} is a {type(data).__name__}, not a table", where=f"{name} (table)",
                         hint="give a pandas or polars DataFrame, an Arrow table or a list of dicts")
    _check_unique(name, names)
    return tuple(names), [dict(zip(names, row, strict=True)) for row in zip(*values, strict=True)]


def _pandas_column(series: Any) -> list[Any]:
    values = series.tolist()
    if str(series.dtype) == "category":
        return [_text(value) for value in values]
    return [cell_of(value) for value in values]


def _arrow_column(column: Any) -> list[Any]:
    values = column.to_pylist()
    if str(column.type).startswith("dictionary<"):
        return [_text(value) for value in values]
    return [cell_of(value) for value in values]


def _text(value: Any) -> str | None:
    """A categorical's value: its text, or an empty cell."""
    cell = cell_of(value)
    return None if cell is None else str(cell)


def _row(name: str, number: int, row: Any) -> dict[str, Any]:
    if not isinstance(row, Mapping):
        raise SheetError(f"row {number} of table {name!r} is a {type(row).__name__}, not a map of columns to values",
                         where=f"{name} (table)", hint="give each row as {column: value, ...}")
    return {str(column): cell_of(value) for column, value in row.items()}


def _check_unique(name: str, names: Sequence[str]) -> None:
    seen: set[str] = set()
    for column in names:
        if column in seen:
            raise SheetError(f"table {name!r} has two columns named {column!r}", where=f"{name} (table)",
                             hint="rename one of them before giving the table")
        seen.add(column)


def cell_of(value: Any) -> Any:
    """One value of an in-memory table as a cell value (see the module docstring); a value of no
    kind a cell holds is given back as it is, for the table kind to refuse by its column."""
    if value is None or type(value).__name__ in _NULL_TYPES:
        return None
    if isinstance(value, bool | str | time):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _number(float(value))
    if isinstance(value, datetime):
        return _datetime(value)
    if isinstance(value, date):
        return value
    if isinstance(value, Decimal):
        return decimal_value(value)
    if isinstance(value, timedelta):
        return iso_duration(timedelta(days=value.days, seconds=value.seconds, microseconds=value.microseconds))
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        return cell_of(value.item())  # a NumPy scalar (np.int64, np.bool_, np.str_ ...)
    return value


def _number(value: float) -> int | float | None:
    if math.isnan(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 2**63 else value


def _datetime(value: datetime) -> date | datetime:
    if hasattr(value, "to_pydatetime"):  # a pandas Timestamp: the datetime it says, to the microsecond
        value = value.to_pydatetime(warn=False)
    plain = datetime(value.year, value.month, value.day, value.hour, value.minute, value.second,
                     value.microsecond, value.tzinfo, fold=value.fold)
    return plain.date() if plain.time() == time(0) and plain.tzinfo is None else plain
