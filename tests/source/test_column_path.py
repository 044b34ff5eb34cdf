"""Rows built a column at a time (`loader.source.column_path`) give exactly what the row-by-row
reading gives: the same records (fields, keys, rows, cells, PII names, in the same order), the same
findings and the same rows left out, for sheets holding every kind of cell and mappings using
the steps, empty modes, references, custom attributes and lists."""

from __future__ import annotations

import datetime as dt
import tempfile
from dataclasses import fields
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loader.profile import load_profile
from loader.source.block_reader import BlockReader
from loader.source.block_records import BlockRecords
from loader.source.mapping import Block
from loader.source.mapping_file import read_mapping
from loader.source.readers import SheetData, SheetRow
from loader.source.records import DesiredRecord, Ref

PROFILE = load_profile()
HEADER = ("Code", "Name", "Parent", "Points", "Level", "Start", "Modes")

MAPPINGS = {
    "plain": """
      code: Code
      name: Name
      parent: {ref: school, column: Parent}
      custom_attributes:
        Level: {column: Level, type: string}
""",
    "steps": """
      code: {column: Code, transform: [strip, upper]}
      name: {column: Name, transform: [strip], empty: error}
      parent: {ref: school, column: Parent, empty: clear}
      custom_attributes:
        Points: {column: Points, type: string, pattern: "[0-9]+"}
        Start: {column: Start, type: date, empty: clear}
        Level: {column: Level, type: string, map: {"1": One}}
""",
    "constants": """
      code: {template: "C-{Code}"}
      name: {value: Fixed name}
      custom_attributes:
        Modes: {column: Modes, type: string, max_length: 5}
        Points: {column: Points, type: string, default: "0"}
""",
    "repeat": """
      code: {column: "{c}"}
      name: {column: Code, empty: clear}
      parent: {ref: school, column: Parent, split: ";"}
""",
}

_cells = st.one_of(
    st.none(), st.sampled_from(["", "  ", "\u00a0", "A1", "a1 ", " B2", "x", "12", "1", "2027-02-28", "31/02/2005",
                                "=SUM(A1)", "'=X", "long text here"]),
    st.integers(-3, 20), st.sampled_from([1.5, 2.0, True, False]), st.just(dt.date(2027, 2, 28)),
)
_rows = st.lists(st.lists(_cells, min_size=0, max_size=len(HEADER)), min_size=0, max_size=25)


def _block(kind: str, where: Path) -> Block:
    repeat = "    repeat: {c: [Name, Level]}\n" if kind == "repeat" else ""
    text = (f"version: 1\nsource: s.xlsx\nentities:\n  courses:\n    entity: course\n    sheet: S\n{repeat}"
            f"    key: [code]\n    fields:{MAPPINGS[kind]}")
    (where / "m.yaml").write_text(text, encoding="utf-8")
    loaded = read_mapping(where / "m.yaml", PROFILE)
    assert loaded.mapping is not None and not [f for f in loaded.findings if f.severity == "error"], loaded.findings
    return loaded.mapping.blocks[0]


def _seen(result: BlockRecords) -> Any:
    return (
        [(r.key, dict(r.fields), r.row, dict(r.cells), r.pii, r.also_rows) for r in result.records],
        [(f.severity, f.code, f.message, f.where) for f in result.findings],
        result.left_out, result.rows_read, result.rows_filtered,
    )


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(sorted(MAPPINGS)), rows=_rows)
def test_building_by_columns_gives_what_building_row_by_row_gives(kind: str, rows: list[list[Any]]) -> None:
    by_columns, by_rows = _both_ways(kind, rows)
    assert _seen(by_columns) == _seen(by_rows)


def test_a_row_that_needs_a_finding_is_read_row_by_row_among_rows_built_by_columns(tmp_path: Path) -> None:
    block = _block("steps", tmp_path)
    sheet = SheetData("s.xlsx", "S", (
        SheetRow(1, HEADER),
        SheetRow(2, ("a1", "Art", "SC1", "10", 1, "2027-02-28")),
        SheetRow(3, ("a2", None, "SC1", "x10")),  # name empty (empty: error) and Points not matching
        SheetRow(4, (None, "Music")),  # the key is empty
        SheetRow(5, ("a3", "Law", None, None, None, "31/02/2005")),  # a date that does not exist
        SheetRow(6, ("a4", "Sport")),
    ))
    result = BlockReader(block, PROFILE, sheet).read()
    assert [r.key for r in result.records] == [("A1",), ("A4",)]
    assert [(f.code, str(f.where)) for f in result.findings] == [
        ("empty-value", "s.xlsx › S › B3"), ("bad-value", "s.xlsx › S › D3"), ("empty-key", "s.xlsx › S › A4"),
        ("bad-value", "s.xlsx › S › F5"),
    ]
    assert result.records[0].fields == {"code": "A1", "name": "Art", "parent": result.records[0].fields["parent"],
                                        "custom_attributes": {"Points": "10", "Start": "2027-02-28", "Level": "One"}}
    assert result.records[1].fields["custom_attributes"] == {"Start": None}
    assert result.records[1].fields["parent"] is None


def _slots(value: Any) -> list[tuple[str, Any]]:
    """Every field of a dataclass value, in order, read from its slots."""
    return [(f.name, getattr(value, f.name)) for f in fields(value)]


_CREDENTIALS = """version: 1
source: s.xlsx
entities:
  credentials:
    entity: credential
    sheet: S
    key: [applicant_id, type, name]
    fields:
      applicant_id: {ref: applicant, column: Code}
      type: {column: Level, transform: [strip, upper], map: {"1": TERTIARY, "2": EMPLOYMENT}}
      name: Name
      institutionCode: {column: Modes, empty: clear}
      duration: {column: Points}
"""


def _block_of(kind: str) -> Any:
    """One of MAPPINGS' blocks, or the credentials block (a key of three fields, `fields_by_type`)."""
    with tempfile.TemporaryDirectory() as folder:
        if kind != "credentials":
            return _block(kind, Path(folder))
        (Path(folder) / "m.yaml").write_text(_CREDENTIALS, encoding="utf-8")
        loaded = read_mapping(Path(folder) / "m.yaml", PROFILE)
        assert loaded.mapping is not None
        return loaded.mapping.blocks[0]


def _both_ways(kind: str, rows: list[list[Any]]) -> tuple[BlockRecords, BlockRecords]:
    """The block of `kind` over a sheet of `rows` read the fast way (by columns, with the shortcuts)
    and the general way (`by_columns=False`)."""
    block = _block_of(kind)
    sheet = SheetData("s.xlsx", "S", (SheetRow(1, HEADER), *(SheetRow(i + 2, tuple(r)) for i, r in enumerate(rows))))
    return BlockReader(block, PROFILE, sheet).read(), BlockReader(block, PROFILE, sheet, by_columns=False).read()


def _made(record: DesiredRecord) -> Any:
    """A record as its slots hold it: the order of its fields (and custom attributes) and cells, and
    the type of every value, which `_seen` (equality) does not look at."""
    return ([(name, type(value), value) for name, value in _slots(record)], list(record.fields.items()),
            repr(record), type(record.cells), list(record.cells.items()), type(record.row))


@settings(max_examples=100, deadline=None)
@given(kind=st.sampled_from([*sorted(MAPPINGS), "credentials"]), rows=_rows)
def test_records_made_a_column_at_a_time_are_made_as_one_by_one(kind: str, rows: list[list[Any]]) -> None:
    """The makers `column_path._records` uses (`loader.source.makers`): the same fields in
    the same order, the same cells, keys of several fields, and the warnings of `fields_by_type`."""
    by_columns, by_rows = _both_ways(kind, rows)
    assert _seen(by_columns) == _seen(by_rows)
    assert [_made(r) for r in by_columns.records] == [_made(r) for r in by_rows.records]


@settings(max_examples=100, deadline=None)
@given(kind=st.sampled_from([*sorted(MAPPINGS), "credentials"]),
       rows=st.lists(st.lists(_cells, min_size=0, max_size=len(HEADER)), min_size=1, max_size=12))
def test_a_block_of_distinct_records_reads_as_the_merging_loop_reads_it(kind: str, rows: list[list[Any]]) -> None:
    """`block_reader._distinct_records` (every row a record of its own key) gives what the loop that
    merges rows of one key gives (`by_columns=False` takes the loop)."""
    # most rows plain, of distinct codes, so that the shortcut is taken often
    rows = [r if i % 4 == 3 else [f"K{i}", f"Name {i}", "SC1", None, "1", None, "x"][:len(r) + 2]
            for i, r in enumerate(rows)]
    shortcut, looped = _both_ways(kind, rows)
    assert shortcut == looped
    assert [_made(r) for r in shortcut.records] == [_made(r) for r in looped.records]


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(sorted(MAPPINGS)),
       rows=st.lists(st.lists(st.sampled_from(["A1", "a1 ", "B2", "SC1", "SC1", "1", "x", "", " ", "'=X"]),
                              min_size=len(HEADER), max_size=len(HEADER)), min_size=1, max_size=20))
def test_columns_of_text_read_as_row_by_row(kind: str, rows: list[list[Any]]) -> None:
    """Columns holding only text take the column-wide paths (`_Cells.column` by itemgetter,
    `_texts` and `_references` by one search or map): the same records, Refs and findings."""
    by_columns, by_rows = _both_ways(kind, rows)
    assert _seen(by_columns) == _seen(by_rows)
    assert [_made(r) for r in by_columns.records] == [_made(r) for r in by_rows.records]
    parents = [r.fields["parent"] for r in by_columns.records if isinstance(r.fields.get("parent"), Ref)]
    assert len({id(p) for p in parents}) == len(set(parents))  # one Ref for each record named


_TEXTS = st.sampled_from(["A", "a", "AB", "", "1"])
_TEXT_LISTS = st.lists(st.sampled_from(["A", "b"]), max_size=2)
_CHECKED = st.one_of(_TEXTS, _TEXT_LISTS, st.integers(0, 2), st.sampled_from([1.0, 0.0, True, False]),
                     st.lists(st.sampled_from([1, True, 1.0]), max_size=2))


@given(values=st.one_of(st.lists(_CHECKED, max_size=12), st.lists(_TEXTS, max_size=12),
                        st.lists(_TEXT_LISTS, max_size=12)),
       check=st.sampled_from([lambda v: type(v) is int, lambda v: v == "A" and type(v) is str,
                              lambda v: isinstance(v, list) and all(type(i) is str for i in v), lambda v: v != 1]))
def test_a_column_is_checked_on_its_distinct_values_as_on_every_value(values: list[Any], check: Any) -> None:
    """`column_path._distinct`: equal texts (and lists of texts) are checked once, anything else
    each time, so 1, 1.0 and True (equal, but of different types) are each checked."""
    from loader.source.column_path import _check_column

    seen, every = [False] * len(values), [False] * len(values)
    _check_column(values, check, seen)
    for j, value in enumerate(values):
        every[j] = value is not None and not check(value)
    assert seen == every
