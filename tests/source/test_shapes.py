"""Contract section 4.1 on real workbooks: header_row auto and its hints, repeated headers,
and the newer value steps, through `read_sources` (validate and plan read through it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.mapping import messages, read, write_mapping, write_workbook


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


TITLED = [
    ["Curriculum export 2027"],
    ["Exported", "2026-11-02"],
    [],
    ["School Code", "Subject Code", "Subject Title", "Status", "Status"],
    ["SCI", "CHEM101", "Chemistry", "Live", "Offered"],
    ["SCI", "PHYS101", "Physics", "Draft", "Offered"],
]


def _subjects(workdir: Path, header: str, fields: str = "name: Subject Title") -> list[str]:
    write_workbook(workdir / "export.xlsx", {"Offerings": TITLED})
    write_mapping(workdir / "m.yaml", f"""\
version: 1
source: export.xlsx
entities:
  subjects:
    entity: subject
    {header}
    key: [code]
    fields:
      code: Subject Code
      {fields}
""")
    return messages(read([workdir / "m.yaml"]))


def test_a_header_on_another_row_is_one_error_naming_that_row(workdir: Path) -> None:
    assert _subjects(workdir, "sheet: Offerings") == [
        "m.yaml:4:3: header row 1 of export.xlsx › Offerings lacks 2 of the columns this block names "
        "('Subject Code', 'Subject Title'); row 4 holds every column this block names: set `header_row: 4` "
        "(or `header_row: auto`)"
    ]


def test_header_row_auto_finds_the_row_below_the_title(workdir: Path) -> None:
    assert _subjects(workdir, "header_row: auto") == []
    sources = read([workdir / "m.yaml"])
    (block,) = sources.blocks
    assert block.header_row == 4 and block.rows_read == 2
    assert [r.key for r in block.records] == [("CHEM101",), ("PHYS101",)]
    assert str(block.records[1].place("name")) == "export.xlsx › Offerings › C6"


def test_header_row_auto_reports_a_column_no_row_holds(workdir: Path) -> None:
    assert _subjects(workdir, "header_row: auto", "name: Subject Name") == [
        "m.yaml:10:13: no column 'Subject Name' in export.xlsx › Offerings (header row 4, found by "
        "`header_row: auto`); "
        "the columns are: 'School Code', 'Subject Code', 'Subject Title', 'Status' (did you mean 'Subject Code'?)"
    ]


def test_a_repeated_header_the_mapping_uses_is_an_error_naming_both_cells(workdir: Path) -> None:
    found = _subjects(workdir, "header_row: 4", "custom_attributes: {State: Status}")
    assert found == [
        "m.yaml:10:34: the header 'Status' occurs 2 times: export.xlsx › Offerings › D4 and "
        "export.xlsx › Offerings › E4; name the one to read as Status#1 or Status#2 (in the order of the "
        "columns), or rename one of them in the sheet"
    ]


def test_name_hash_k_picks_one_of_the_repeated_headers(workdir: Path) -> None:
    assert _subjects(workdir, "header_row: auto", "custom_attributes: {State: Status#2}") == []
    (block,) = read([workdir / "m.yaml"]).blocks
    record = block.records[0]
    assert record.fields["custom_attributes"] == {"State": "Offered"}
    assert str(record.place("custom_attributes.State")) == "export.xlsx › Offerings › E5"


def test_a_repeated_header_the_mapping_does_not_use_is_fine(workdir: Path) -> None:
    assert _subjects(workdir, "header_row: 4") == []


APPLICANTS = [
    ["Student ID", "Email", "Born", "Postcode"],
    ["S001", "ann.lee@example.edu", 38536, 2640],            # a date typed into a General cell: a serial
    ["S002", "bo at example", "31/02/2005", "0800"],         # numbers stored as text keep their zeros
    ["S003", "cy@example.edu", "3 Jul 2005", 800],
]


def test_format_pad_and_pattern_messages_at_their_cells(workdir: Path) -> None:
    write_workbook(workdir / "people.xlsx", {"People": APPLICANTS})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: people.xlsx
entities:
  people:
    entity: applicant
    key: [external_id]
    fields:
      external_id: Student ID
      email_address:
        column: Email
        pattern: {regex: '[^@\\s]+@[^@\\s]+\\.[^@\\s]+', message: a valid e-mail address}
      date_of_birth: {column: Born, format: ["%d/%m/%Y", "%d %b %Y", serial]}
      custom_attributes:
        Postcode: {column: Postcode, pad: {width: 4}}
""")
    sources = read([workdir / "m.yaml"])
    assert messages(sources) == [
        "people.xlsx › People › B3: email_address: expected a valid e-mail address, got 'bo at example'",
        "people.xlsx › People › C3: date_of_birth: that date does not exist: '31/02/2005'",
    ]
    records = {r.key[0]: r.fields for r in sources.blocks[0].records}
    assert records["S001"]["date_of_birth"] == "2005-07-03"
    assert records["S001"]["custom_attributes"] == {"Postcode": "2640"}
    assert records["S003"]["date_of_birth"] == "2005-07-03"
    assert records["S003"]["custom_attributes"] == {"Postcode": "0800"}


def test_a_format_for_a_text_field_or_without_a_whole_date_is_refused_at_its_place(workdir: Path) -> None:
    write_workbook(workdir / "people.xlsx", {"People": APPLICANTS})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: people.xlsx
entities:
  people:
    entity: applicant
    key: [external_id]
    fields:
      external_id: {column: Student ID, format: "%d/%m/%Y"}
      date_of_birth: {column: Born, format: ["%m/%Y", serial]}
      email_address: {column: Email, replace: {pattern: "(", with: ""}}
""")
    assert messages(read([workdir / "m.yaml"])) == [
        "m.yaml:6:11: key field 'external_id' is not in `fields`; every key field must be mapped",
        "m.yaml:8:41: `format` is for `type: date` or `type: epoch_ms`; this field's type is string",
        "m.yaml:9:46: format '%m/%Y' does not give a whole date: write a strptime pattern with a day, a month "
        "and a year, such as %d/%m/%Y or %d %b %Y, or `serial` for Excel serial numbers",
        "m.yaml:10:57: bad regular expression: missing ), unterminated subpattern at position 0",
    ]
