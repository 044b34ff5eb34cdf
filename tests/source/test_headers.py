"""find_header_row: the header row below titles and blank rows, by the names wanted or by its look."""

from __future__ import annotations

import datetime as dt

from loader.source.headers import find_header_row, looks_like_header
from loader.source.readers import SheetRow


def _rows(*values: tuple[object, ...]) -> list[SheetRow]:
    return [SheetRow(number, tuple(row)) for number, row in enumerate(values, start=1) if row]  # type: ignore[arg-type]


EXPORT = _rows(
    ("Curriculum export 2027",),
    ("Exported:", dt.date(2026, 11, 2)),
    (),
    ("School Code", "Subject Code ", "\u00a0Subject Title", "Campus"),
    ("SCI", 4101, "Chemistry", "Albury"),
)


def test_by_wanted_names_strips_whitespace() -> None:
    row = find_header_row(EXPORT, ["Subject Code", "Subject Title"])
    assert row is not None and row.number == 4


def test_wanted_names_missing_everywhere_give_none() -> None:
    assert find_header_row(EXPORT, ["Subject Code", "Owner"]) is None


def test_by_look_skips_a_lone_title_and_a_label_with_a_date() -> None:
    row = find_header_row(EXPORT)
    assert row is not None and row.number == 4


def test_scan_limits_the_rows_looked_at() -> None:
    assert find_header_row(EXPORT, ["Campus"], scan=2) is None
    assert find_header_row(EXPORT, ["Campus"], scan=3) is not None  # blank rows are not in `rows`


def test_a_row_of_numbers_or_repeated_text_is_not_a_header() -> None:
    assert not looks_like_header(SheetRow(1, (1, 2, 3, 4)))
    assert not looks_like_header(SheetRow(1, ("x", "x", "x", "x", "y")))
    assert looks_like_header(SheetRow(1, ("Code", "Name", None, "Status")))
    assert find_header_row([]) is None


def test_a_header_with_a_line_break_is_found_by_its_name_with_a_space_and_as_written() -> None:
    from loader.source.headers import Header

    rows = _rows(("Unit\nCode", "Credit\r\n Points", "Name"), ("ABC1", 6, "Algebra"))
    assert find_header_row(rows, ["Credit Points", "Unit Code"]) is rows[0]
    header = Header.of(rows[0])
    assert header.columns["Credit Points"] == 1
    assert header.columns["Credit\nPoints"] == 1 and header.columns[" Credit\u00a0 Points "] == 1
    assert header.lacks(["Credit Points", "Unit\nCode", "Owner"]) == ["Owner"]
    assert header.names() == ["Unit\nCode", "Credit\r\n Points", "Name"]


def test_headers_differing_only_in_inner_whitespace_are_one_repeated_name() -> None:
    from loader.source.headers import Header

    header = Header.of(SheetRow(1, ("Status", "Credit Points", "Credit\nPoints")))
    assert header.repeated["Credit Points"] == (1, 2)
    assert header.columns["Credit Points#2"] == 2
