"""Reading's column-at-a-time makers (`loader.source.makers`) make the values the plain
constructors make: the same fields, in the same order, of the same types; and records come back
from pickle equal."""

from __future__ import annotations

import pickle
from dataclasses import fields
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from loader.places import row_place
from loader.record_fields import CUSTOM
from loader.source.block_rows import CellLayout, RowCells
from loader.source.makers import desired_records, fields_by_row, row_cells, row_places
from loader.source.records import DesiredRecord


def _slots(value: Any) -> list[tuple[str, Any]]:
    """Every field of a dataclass value, in order, read from its slots."""
    return [(f.name, getattr(value, f.name)) for f in fields(value)]


_NAMES = st.lists(st.text(min_size=1, max_size=3), unique=True, max_size=4)
_VALUES = st.one_of(st.none(), st.text(max_size=3), st.integers(), st.lists(st.text(max_size=2), max_size=2))


@given(plain=_NAMES, labels=_NAMES, count=st.integers(0, 5), data=st.data())
def test_each_rows_fields_are_the_dict_the_plain_way_makes(plain: list[str], labels: list[str], count: int,
                                                           data: st.DataObject) -> None:
    plain_columns = [(name, data.draw(st.lists(_VALUES, min_size=count, max_size=count))) for name in plain]
    labelled = [(label, data.draw(st.lists(_VALUES, min_size=count, max_size=count))) for label in labels]
    made = fields_by_row(count, plain_columns, labelled)
    expected = []
    for j in range(count):
        row: dict[str, Any] = {name: values[j] for name, values in plain_columns}
        if labelled:
            row[CUSTOM] = {label: values[j] for label, values in labelled}
        expected.append(row)
    assert made == expected
    assert [list(row) for row in made] == [list(row) for row in expected]  # in the same order
    assert all(type(row) is dict for row in made)


@given(numbers=st.lists(st.integers(1, 10_000), max_size=6), note=st.sampled_from(["", "n=2"]),
       sheet=st.sampled_from([None, "S"]))
def test_rows_cells_and_records_made_a_column_at_a_time_are_made_as_one_by_one(
        numbers: list[int], note: str, sheet: str | None) -> None:
    layout = CellLayout("s.xlsx", sheet, {"code": 0, "name": 2})
    names = ("code", "name")
    places = row_places("s.xlsx", sheet, numbers, note)
    assert places == [row_place("s.xlsx", sheet, n, note) for n in numbers]
    cells = row_cells(layout, numbers, names)
    assert [dict(c) for c in cells] == [dict(RowCells(layout, n, names)) for n in numbers]
    keys = [(f"K{n}",) for n in numbers]
    made = desired_records("b", "course", keys, [{"code": k[0]} for k in keys], places, cells, frozenset({"code"}))
    built = [DesiredRecord("b", "course", k, {"code": k[0]}, p, c, frozenset({"code"}))
             for k, p, c in zip(keys, places, cells, strict=True)]
    assert [_slots(m) for m in made] == [_slots(b) for b in built]


@given(numbers=st.lists(st.integers(257, 10**6), min_size=1, max_size=4),
       sheet=st.one_of(st.none(), st.text(max_size=3)))
def test_records_come_back_from_pickle_equal_their_cells_on_their_rows_number(numbers: list[int],
                                                                             sheet: str | None) -> None:
    layout = CellLayout("s.xlsx", sheet, {"code": 0, "name": 2})
    places = row_places("s.xlsx", sheet, numbers)
    cells = row_cells(layout, [int(str(n)) for n in numbers], ("code", "name"))  # other objects of the numbers
    keys = [(f"K{n}",) for n in numbers]
    made = desired_records("b", "course", keys, [{"code": k[0]} for k in keys], places, cells, frozenset({"code"}))
    other = DesiredRecord("b", "course", ("X",), {}, places[0], {"code": places[0]})  # cells as a plain dict
    back = pickle.loads(pickle.dumps([*made, other], pickle.HIGHEST_PROTOCOL))
    assert [_slots(r) for r in back] == [_slots(r) for r in [*made, other]]
    assert [dict(r.cells) for r in back] == [dict(r.cells) for r in [*made, other]]
    assert back[-1].cells == {"code": places[0]}
