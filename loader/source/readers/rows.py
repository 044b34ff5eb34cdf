"""What every reader gives: non-blank rows of cell values, with the place of each cell.

How a cell of each kind of file becomes a value is documented in the reader's module and, for
users, in docs/mappings.md ("How cells are read").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time
from itertools import repeat
from typing import Any, NamedTuple

from loader.places import CellRef
from loader.safe_cells import QUOTE, QUOTED_PREFIX

CellValue = str | int | float | bool | date | datetime | time | None

WHITESPACE = " \t\r\n\u00a0\u2007\u202f\ufeff"
# How `loader.safe_cells` writes text that could be read as a formula: quotes, then = + - @ tab or CR.
NEUTRALISED = QUOTED_PREFIX


class SheetRow(NamedTuple):
    """One non-blank row: 1-based `number` and the values from column A on (a named tuple: a sheet
    makes one per row, and a tuple costs a quarter of a frozen dataclass to make)."""

    number: int
    values: tuple[CellValue, ...]


@dataclass(frozen=True)
class SheetData:
    """Every non-blank row of one sheet (or CSV file), with warnings about cells."""

    file: str  # display path
    sheet: str | None  # None for CSV
    rows: tuple[SheetRow, ...]
    warnings: tuple[tuple[CellRef, str, str], ...] = ()  # (cell, code, message)
    # A source that is not a sheet names its records, not rows (`loader.source.record_places`):
    # each row number's record name, and the columns' names for the cells; None for a sheet.
    records: Mapping[int, str] | None = None
    names: tuple[str, ...] = ()

    def cell(self, row: int, column: int) -> CellRef:
        """The CellRef of a 1-based row and 0-based column index."""
        if self.records is not None:
            name = self.names[column] if column < len(self.names) else column_letter(column)
            return CellRef(self.file, None, name, row, record=record_name(self.records, row))
        return CellRef(self.file, self.sheet, f"{column_letter(column)}{row}", row)

    def row_ref(self, row: int) -> CellRef:
        if self.records is not None:
            return CellRef(self.file, None, None, row, record=record_name(self.records, row))
        return CellRef(self.file, self.sheet, None, row)


def record_name(records: Mapping[int, str], row: int) -> str:
    """The name of the record read as `row`: its key, else its place among the records read."""
    return records.get(row) or f"record {row - 1}"


_LETTERS: dict[int, str] = {}


def column_letter(index: int) -> str:
    """0-based column index -> "A", "B", ... "AA"."""
    letter = _LETTERS.get(index)
    if letter is None:
        letter = _LETTERS.setdefault(index, _letters(index + 1))
    return letter


def _letters(number: int) -> str:
    """openpyxl's get_column_letter, without importing openpyxl (and numpy) for a CSV file."""
    if not 1 <= number <= 18278:  # beyond "ZZZ": openpyxl's own error, as before
        from openpyxl.utils import get_column_letter

        return str(get_column_letter(number))
    letters = ""
    while number:
        number, rest = divmod(number - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def unneutralised(text: str) -> str:
    """`text` without the quote the loader puts before text that could be read as a formula (one
    quote off a run of quotes followed by = + - @ tab or CR: "'=1" is "=1", "''=1" is "'=1")."""
    return text[1:] if text.startswith(QUOTE) and NEUTRALISED.match(text) else text


def indexes(values: list[Any], wanted: object) -> Iterator[int]:
    """The indexes of the items equal to `wanted`, each found by `list.index` (a search in C): a
    column of 100,000 values is searched in a millisecond where a loop over it takes ten."""
    at = -1
    while True:
        try:
            at = values.index(wanted, at + 1)
        except ValueError:
            return
        yield at


def blank_texts(texts: list[str]) -> list[int]:
    """The indexes of the texts that are empty or whitespace."""
    return list(indexes(list(map(str.strip, texts, repeat(WHITESPACE))), ""))


def is_blank(value: CellValue) -> bool:
    return value is None or (isinstance(value, str) and not value.strip(WHITESPACE))
