"""Finding the header row of a sheet: staff's exports put titles, dates and blank rows above it.

Used by `header_row: auto` (the block reader) and by `loader init` (which proposes a mapping).
A header cell's text is compared after stripping whitespace (non-breaking spaces included).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

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

