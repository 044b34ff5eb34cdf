"""Where things are: a cell or row of a sheet, a position in a mapping or configuration file.

Places are values; they are turned into text (`file › sheet › cell`, `file:line:col`) only here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PLACE_SEPARATOR = " › "


@dataclass(frozen=True, order=True, slots=True)
class CellRef:
    """Where a value came from: `curriculum.xlsx › Subjects › D17`, or in a source that is not a
    sheet (a query, a JSON or XML feed, a table), the record by its key and the column (or path)
    read: `handbook (query) › MATH1001 › credit_points`.

    `file` is the path as the user wrote it (relative to the working directory when it can be);
    `sheet` is None for CSV; `cell` is an A1 address (a column's name with `record`), or None for
    a whole row; `row` is the 1-based row number in the sheet (the record's, for the results);
    `record` names a record of a source that is not a sheet, where a row number would change
    from one read to the next.
    """

    file: str
    sheet: str | None = None
    cell: str | None = None
    row: int | None = None
    repeat: str = ""  # a row read once per `repeat` value names it: "row 7 (n=2)"
    record: str | None = None

    def __str__(self) -> str:
        parts = [self.file]
        if self.record is not None:
            parts += [self.record] if self.cell is None else [self.record, self.cell]
        elif self.sheet is not None:
            parts.append(self.sheet)
        if self.record is None and self.cell is not None:
            parts.append(self.cell)
        elif self.record is None and self.row is not None:
            parts.append(f"row {self.row}")
        return PLACE_SEPARATOR.join(parts) + (f" ({self.repeat})" if self.repeat else "")


def row_place(file: str, sheet: str | None, row: int, repeat: str = "") -> CellRef:
    """The place of a whole row: CellRef(file, sheet, None, row, repeat)."""
    return CellRef(file, sheet, None, row, repeat)


@dataclass(frozen=True, order=True)
class MappingPlace:
    """A place in a mapping file: `mappings/curriculum.yaml:14:7` (1-based line and column)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True, order=True)
class FilePlace:
    """A whole file, when nothing finer can be named: `samples/codes.xlsx`."""

    file: str

    def __str__(self) -> str:
        return self.file


Place = CellRef | MappingPlace | FilePlace


def place_to_dict(place: Place) -> dict[str, Any]:
    """The JSON form of a place (plan.json, machine output): its fields, None ones left out."""
    if isinstance(place, MappingPlace):
        return {"file": place.file, "line": place.line, "col": place.col}
    if isinstance(place, FilePlace):
        return {"file": place.file}
    if place.record is not None:
        return {k: v for k, v in (("file", place.file), ("record", place.record), ("column", place.cell),
                                  ("row", place.row), ("repeat", place.repeat or None)) if v is not None}
    return {k: v for k, v in (("file", place.file), ("sheet", place.sheet), ("cell", place.cell),
                              ("row", place.row), ("repeat", place.repeat or None)) if v is not None}


def place_from_dict(data: Mapping[str, Any]) -> Place:
    """Inverse of place_to_dict."""
    if "line" in data:
        return MappingPlace(str(data["file"]), int(data["line"]), int(data["col"]))
    if "record" in data:
        row = data.get("row")
        return CellRef(str(data["file"]), None, data.get("column"), None if row is None else int(row),
                       str(data.get("repeat", "")), str(data["record"]))
    if any(k in data for k in ("sheet", "cell", "row", "repeat")):
        row = data.get("row")
        return CellRef(str(data["file"]), data.get("sheet"), data.get("cell"), None if row is None else int(row),
                       str(data.get("repeat", "")))
    return FilePlace(str(data["file"]))

