"""find_header_row: the header below title rows (the behaviour `header_row: auto` and `loader init` share)."""

from __future__ import annotations

from loader.source.headers import find_header_row
from loader.source.readers import SheetRow

# As readers give them: blank rows are left out, numbers kept.
TITLED = (
    SheetRow(1, ("Applicants: intake 2027", None, None, None)),
    SheetRow(3, ("Student No.", "Given name(s)", "E-mail addr.", "D.O.B.")),
    SheetRow(4, ("A1", "Ada", "ada@example.com", "2001-02-03")),
)


def test_a_title_row_and_a_blank_row_above_the_header_are_passed_over() -> None:
    assert find_header_row(TITLED) == TITLED[1]


def test_the_row_holding_every_wanted_column_is_the_header() -> None:
    assert find_header_row(TITLED, ["Given name(s)", "D.O.B."]) == TITLED[1]
    assert find_header_row(TITLED, [" Student No. "]) == TITLED[1]


def test_no_row_qualifies_when_a_wanted_column_is_nowhere_near_the_top() -> None:
    assert find_header_row(TITLED, ["Surname"]) is None
    assert find_header_row(TITLED, ["Given name(s)"], scan=1) is None
