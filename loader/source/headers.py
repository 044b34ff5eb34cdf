"""Finding the header row of a sheet: staff's exports put titles, dates and blank rows above it.

Used by `header_row: auto` (the block reader) and by `loader init` (which proposes a mapping).
A header cell's text is compared after stripping whitespace (non-breaking spaces included) and
folding each run of whitespace inside it to one space: a header saved from Excel as
`Credit\nPoints` is the column `Credit Points`, and naming it `Credit\nPoints` works too.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from loader.source.readers.rows import WHITESPACE, SheetRow, is_blank

SCAN_ROWS = 30


def header_text(value: object) -> str:
    """A header cell's name: its text without surrounding whitespace ('' for an empty cell)."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip(WHITESPACE)


_RUNS = re.compile(f"[\\s{WHITESPACE}]+")
V = TypeVar("V")


def folded(name: str) -> str:
    """A header name as compared: each run of whitespace one space, none around it."""
    return _RUNS.sub(" ", name).strip(" ")


class FoldedNames(Mapping[str, V]):
    """Names -> values, looked up with whitespace folded (`folded`); iterates the names as first given."""

    def __init__(self, items: Iterable[tuple[str, V]] = ()) -> None:
        self._values: dict[str, V] = {}
        self._shown: dict[str, str] = {}
        for name, value in items:
            key = folded(name)
            if key not in self._values:
                self._values[key] = value
                self._shown[key] = name

    def __getitem__(self, name: str) -> V:
        return self._values[folded(name)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and folded(name) in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._shown.values())

    def __len__(self) -> int:
        return len(self._values)


def find_header_row(
    rows: Sequence[SheetRow], wanted: Collection[str] = (), *, scan: int = SCAN_ROWS
) -> SheetRow | None:
    """The header row among the first `scan` rows: with `wanted`, the first row holding every name in
    `wanted` (cell text compared after stripping whitespace); without, the first row that looks like a
    header (mostly distinct, non-empty text cells, not a lone title cell)."""
    names = {folded(name) for name in wanted}
    for row in rows[:scan]:
        if names:
            if names <= {folded(header_text(v)) for v in row.values}:
                return row
        elif looks_like_header(row):
            return row
    return None


def looks_like_header(row: SheetRow) -> bool:
    """At least two filled cells, most of them text, and most of those distinct."""
    filled = [v for v in row.values if not is_blank(v)]
    if len(filled) < 2:
        return False
    texts = [header_text(v) for v in filled if isinstance(v, str)]
    if len(texts) * 4 < len(filled) * 3:  # at least three in four cells are text
        return False
    return len(set(texts)) * 5 >= len(texts) * 4  # at least four in five distinct



@dataclass(frozen=True)
class Header:
    """The header row of a block: where each column name is.

    A name that occurs more than once is in `repeated`; `Name#2` picks its second occurrence
    (the documented way to choose one of two columns both headed `Status`). Names are looked up with
    whitespace folded (`FoldedNames`), so `Credit Points` finds the header `Credit\nPoints`.
    """

    row: int
    columns: Mapping[str, int]  # name (and `Name#k` of a repeated name) -> 0-based column
    repeated: Mapping[str, tuple[int, ...]]  # name -> every column headed so, when more than one

    @classmethod
    def of(cls, row: SheetRow) -> Header:
        columns: list[tuple[str, int]] = []
        seen: dict[str, list[int]] = {}
        shown: dict[str, str] = {}
        for index, value in enumerate(row.values):
            name = header_text(value)
            if name:
                seen.setdefault(folded(name), []).append(index)
                shown.setdefault(folded(name), name)
                columns.append((name, index))
        repeated = [(shown[key], tuple(at)) for key, at in seen.items() if len(at) > 1]
        for name, at in repeated:
            columns += [(f"{name}#{k}", index) for k, index in enumerate(at, start=1)]
        return cls(row.number, FoldedNames(columns), FoldedNames(repeated))

    def lacks(self, wanted: Iterable[str]) -> list[str]:
        """The names of `wanted` this header does not have, in order, once each."""
        return list(dict.fromkeys(name for name in wanted if name not in self.columns))

    def names(self) -> list[str]:
        """The column names as the sheet gives them (no `#k` picks)."""
        return [name for name in self.columns if name in self.repeated or not _is_pick(name, self.repeated)]


def _is_pick(name: str, repeated: Mapping[str, tuple[int, ...]]) -> bool:
    base, sep, k = name.rpartition("#")
    return bool(sep) and k.isdigit() and base in repeated
