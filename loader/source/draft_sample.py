"""A sheet read for drafting (`loader init`): its header row, a sample of each column's values, and
the text of every row of the columns filled on every row (the candidates for a key)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from loader.source.headers import find_header_row, folded
from loader.source.readers import WHITESPACE, SheetData, SheetRow, is_blank

SAMPLE_ROWS = 200


@dataclass(frozen=True)
class Sample:
    """A sheet read for drafting: its header names and the values below them."""

    sheet: str | None
    header_row: int
    headers: tuple[str, ...]
    columns: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    unique: frozenset[str] = frozenset()  # the columns whose values are filled and distinct on every row
    rows: int = 0  # rows below the header
    filled: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # every row's text of the filled columns
    row_numbers: tuple[int, ...] = ()  # the sheet's row number of each row below the header


def sample_of(data: SheetData) -> Sample | None:
    """The header row (found as `header_row: auto` finds it) and up to SAMPLE_ROWS values per column."""
    header = find_header_row(data.rows)
    if header is None:
        return None
    names: list[tuple[int, str]] = [
        (i, folded(str(v))) for i, v in enumerate(header.values) if not is_blank(v)
    ]
    rows = [r for r in data.rows if r.number > header.number]
    below = rows[:SAMPLE_ROWS]
    columns = {
        name: tuple(r.values[i] for r in below if i < len(r.values) and not is_blank(r.values[i])) for i, name in names
    }
    filled = _filled_columns(rows, names)
    unique = frozenset(name for name, texts in filled.items() if len(set(texts)) == len(texts))
    return Sample(data.sheet, header.number, tuple(n for _, n in names), columns, unique, len(rows), filled,
                  tuple(r.number for r in rows))


def _filled_columns(rows: Sequence[SheetRow], names: Sequence[tuple[int, str]]) -> dict[str, tuple[str, ...]]:
    """The text of every row of each column filled on every row (the candidates for a key)."""
    filled = {}
    for i, name in names:
        texts = tuple(_text(r.values[i]) if i < len(r.values) and not is_blank(r.values[i]) else "" for r in rows)
        if rows and all(texts):
            filled[name] = texts
    return filled


def _text(value: Any) -> str:
    return str(value).strip(WHITESPACE)
