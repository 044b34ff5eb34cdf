"""Finding the header row of a sheet: staff's exports put titles, dates and blank rows above it.

Used by `header_row: auto` (the block reader) and by `loader init` (which proposes a mapping).
A header cell's text is compared after stripping whitespace (non-breaking spaces included).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from loader.source.readers.rows import WHITESPACE, SheetRow, is_blank

SCAN_ROWS = 30


def header_text(value: object) -> str:
    """A header cell's name: its text without surrounding whitespace ('' for an empty cell)."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip(WHITESPACE)


def find_header_row(
    rows: Sequence[SheetRow], wanted: Collection[str] = (), *, scan: int = SCAN_ROWS
) -> SheetRow | None:
    """The header row among the first `scan` rows: with `wanted`, the first row holding every name in
    `wanted` (cell text compared after stripping whitespace); without, the first row that looks like a
    header (mostly distinct, non-empty text cells, not a lone title cell)."""
    names = {name.strip(WHITESPACE) for name in wanted}
    for row in rows[:scan]:
        if names:
            if names <= {header_text(v) for v in row.values}:
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
    (the documented way to choose one of two columns both headed `Status`).
    """

    row: int
    columns: Mapping[str, int]  # name (and `Name#k` of a repeated name) -> 0-based column
    repeated: Mapping[str, tuple[int, ...]]  # name -> every column headed so, when more than one

    @classmethod
    def of(cls, row: SheetRow) -> Header:
        columns: dict[str, int] = {}
        seen: dict[str, list[int]] = {}
        for index, value in enumerate(row.values):
            name = header_text(value)
            if name:
                seen.setdefault(name, []).append(index)
                columns.setdefault(name, index)
        repeated = {name: tuple(at) for name, at in seen.items() if len(at) > 1}
        for name, at in repeated.items():
            for k, index in enumerate(at, start=1):
                columns.setdefault(f"{name}#{k}", index)
        return cls(row.number, columns, repeated)

    def lacks(self, wanted: Iterable[str]) -> list[str]:
        """The names of `wanted` this header does not have, in order, once each."""
        return list(dict.fromkeys(name for name in wanted if name not in self.columns))

    def names(self) -> list[str]:
        """The column names as the sheet gives them (no `#k` picks)."""
        return [name for name in self.columns if name in self.repeated or not _is_pick(name, self.repeated)]


def _is_pick(name: str, repeated: Mapping[str, tuple[int, ...]]) -> bool:
    base, sep, k = name.rpartition("#")
    return bool(sep) and k.isdigit() and base in repeated
