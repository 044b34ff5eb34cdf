"""A sheet holding only text is read a sheet at a time (`xlsx._text_sheet`): the same rows, values
and warnings as reading it a cell at a time (`xlsx._assemble`) gives."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from loader.source.readers import SheetData
from loader.source.readers.xlsx import _assemble, _text_sheet
from loader.source.readers.xlsx_parts import SheetMeta

_TEXTS = st.sampled_from(["", " ", "\u00a0", "A1", " a ", "x", "'=SUM(A1)", "'-5", "'quoted", "'", "\x00'=X",
                          "=raw", "long text here", "\ufeff"])


@settings(max_examples=300, deadline=None)
@given(width=st.integers(1, 5), data=st.data())
def test_a_sheet_of_text_reads_as_cell_by_cell(width: int, data: st.DataObject) -> None:
    rows: list[Sequence[object]] = data.draw(st.lists(st.lists(_TEXTS, min_size=width, max_size=width), max_size=30))
    meta = SheetMeta(uncached_formulas=((2, 0),))
    fast = _text_sheet("s.xlsx", "S", rows, meta)
    slow = _assemble("s.xlsx", "S", enumerate(rows, start=1), meta)
    if rows:
        assert fast is not None
        assert fast == slow
        assert _kinds(fast) == _kinds(slow)
    else:
        assert fast is None


def test_a_sheet_holding_anything_but_text_or_a_merged_range_is_left_to_the_cell_by_cell_reading() -> None:
    assert _text_sheet("s.xlsx", "S", [["a", 1.0]], SheetMeta()) is None
    assert _text_sheet("s.xlsx", "S", [["a", "b"]], SheetMeta(merged=((1, 0, 2, 0),))) is None
    assert _text_sheet("s.xlsx", "S", [["a", "b"], ["c"]], SheetMeta()) is None
    read = _text_sheet("s.xlsx", "S", [["a", "b"], ["", " "], ["'=c", ""]], SheetMeta())
    assert read is not None and [(r.number, r.values) for r in read.rows] == [(1, ("a", "b")), (3, ("=c",))]


def _kinds(read: SheetData) -> list[tuple[type, ...]]:
    return [tuple(map(type, row.values)) for row in read.rows]
