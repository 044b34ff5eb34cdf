"""Finding the header row of a sheet: the row that names the columns, below any title rows.

`find_header_row(rows, wanted)` returns the first of the top `scan` rows holding every wanted
column name (whitespace around names ignored); without `wanted`, the first row that looks like a
header: at least two cells, all of them text that is not a number, no name twice, and at least half
as many cells as the fullest row near the top (a title or a "Prepared by: X" line has fewer).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from loader.source.readers import WHITESPACE, SheetRow, is_blank


def _names(row: SheetRow) -> list[str]:
    return [str(v).strip(WHITESPACE) for v in row.values if not is_blank(v)]


def _looks_like_header(row: SheetRow, widest: int) -> bool:
    names = _names(row)
    if len(names) < 2 or len(names) * 2 < widest or len(set(names)) != len(names):
        return False
    texts = [v for v in row.values if not is_blank(v)]
    return all(isinstance(v, str) and not _is_number(v) for v in texts)


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def find_header_row(rows: Sequence[SheetRow], wanted: Collection[str] = (), *, scan: int = 30) -> SheetRow | None:
    """The header row among the first `scan` non-blank rows, or None when none qualifies."""
    top = rows[:scan]
    if wanted:
        need = {w.strip(WHITESPACE) for w in wanted}
        return next((row for row in top if need <= set(_names(row))), None)
    widest = max((len(_names(row)) for row in top), default=0)
    return next((row for row in top if _looks_like_header(row, widest)), None)
