"""Contract section 4.1 on real workbooks: header_row auto and its hints, repeated headers,
and the newer value steps, through `read_sources` (validate and plan read through it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


APPLICANTS: list[list[Any]] = [
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


QUALS: list[list[Any]] = [
    ["Applicant export", None, None, None, None, None, None, None, None],
    ["Student ID", "Qual 1 Type", "Qual 1 Institution", "Qual 1 Institution Code", "Qual 1 Completed",
     "Qual 2 Type", "Qual 2 Institution", "Qual 2 Institution Code", "Qual 2 Completed"],
    ["S001", "Tertiary", "Uni of Somewhere", "USW", "03/07/2005", "Employment", "Acme", "ACME", None],
    ["S002", "Subject", "Hill High", "HH", "31/02/2005", None, None, None, None],
]

QUAL_MAPPING = """\
version: 1
source: quals.xlsx
entities:
  credentials:
    entity: credential
    header_row: auto
    repeat: {n: [1, 2]}
    where: {column: "Qual {n} Type", not_empty: true}
    key: [applicant_id, type, name]
    fields:
      applicant_id: {ref: applicant, column: Student ID}
      type: {column: "Qual {n} Type", transform: [strip, upper]}
      name: {column: "Qual {n} Institution"}
      institutionCode:
        column: "Qual {n} Institution Code"
        when: {column: "Qual {n} Type", not_equals: Employment}
      completionDate: {column: "Qual {n} Completed", type: date, format: ["%d/%m/%Y", serial]}
"""


def test_repeat_yields_one_record_per_group_and_names_the_repeat_value(workdir: Path) -> None:
    write_workbook(workdir / "quals.xlsx", {"Applicants 2027": QUALS})
    write_mapping(workdir / "m.yaml", QUAL_MAPPING)
    sources = read([workdir / "m.yaml"])
    assert messages(sources) == [
        "quals.xlsx › Applicants 2027 › E4: completionDate (n=1): that date does not exist: '31/02/2005'"
    ]
    (block,) = sources.blocks
    assert block.rows_read == 2 and block.rows_filtered == 0
    by_type = {r.fields["type"]: r for r in block.records}
    assert set(by_type) == {"TERTIARY", "EMPLOYMENT"}
    assert by_type["TERTIARY"].fields["institutionCode"] == "USW"
    assert "institutionCode" not in by_type["EMPLOYMENT"].fields  # `when` fails: an empty cell, `empty: skip`
    assert str(by_type["EMPLOYMENT"].place("name")) == "quals.xlsx › Applicants 2027 › G3"
    assert str(by_type["TERTIARY"].place("completionDate")) == "quals.xlsx › Applicants 2027 › E3"


def test_a_missing_repeated_column_is_reported_once_per_value(workdir: Path) -> None:
    write_workbook(workdir / "quals.xlsx", {"Applicants 2027": [row[:5] for row in QUALS]})
    write_mapping(workdir / "m.yaml", QUAL_MAPPING)
    found = messages(read([workdir / "m.yaml"]))
    assert [m.split(";")[0] for m in found] == [
        "m.yaml:8:21: no column 'Qual 2 Type' in quals.xlsx › Applicants 2027 (header row 2, found by "
        "`header_row: auto`)",
        "m.yaml:13:22: no column 'Qual 2 Institution' in quals.xlsx › Applicants 2027 (header row 2, found by "
        "`header_row: auto`)",
        "m.yaml:15:17: no column 'Qual 2 Institution Code' in quals.xlsx › Applicants 2027 (header row 2, "
        "found by `header_row: auto`)",
        "m.yaml:17:32: no column 'Qual 2 Completed' in quals.xlsx › Applicants 2027 (header row 2, found by "
        "`header_row: auto`)",
    ]


OFFERINGS: list[list[Any]] = [
    ["Subject Code", "Subject Title", "Campus", "Faculty"],
    [4101, "Chemistry", "Albury", "SCI"],
    ["04101", "Chemistry", "Online", "SCI"],
    [4101, "Chemistry", "Albury", "SCI"],
    ["04102", "Physics", "Online", "SCI"],
    ["04102", "Physics", "Albury", "ENG"],
]


def test_collect_gathers_values_in_first_seen_order_and_other_fields_must_still_agree(workdir: Path) -> None:
    write_workbook(workdir / "offerings.xlsx", {"Offerings": OFFERINGS})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: offerings.xlsx
entities:
  subjects:
    entity: subject
    key: [code]
    fields:
      code: {column: Subject Code, pad: {width: 5}}
      name: Subject Title
      custom_attributes:
        Campus: {column: Campus, collect: join}
        Faculty: Faculty
""")
    sources = read([workdir / "m.yaml"])
    assert messages(sources) == [
        "offerings.xlsx › Offerings › D6: key ('04102') has different values "
        "for custom_attributes.Faculty: 'SCI' and 'ENG'; rows with one key must agree (the record is left out; "
        "the other value is at offerings.xlsx › Offerings › D5)"
    ]
    (record,) = sources.blocks[0].records
    assert record.key == ("04101",)
    assert record.fields["custom_attributes"] == {"Campus": "Albury, Online", "Faculty": "SCI"}
    assert str(record.place("custom_attributes.Campus")) == "offerings.xlsx › Offerings › C2"


def test_a_key_field_cannot_collect(workdir: Path) -> None:
    write_workbook(workdir / "offerings.xlsx", {"Offerings": OFFERINGS})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: offerings.xlsx
entities:
  subjects:
    entity: subject
    key: [code]
    fields:
      code: {column: Subject Code, collect: join}
""")
    assert messages(read([workdir / "m.yaml"])) == [
        "m.yaml:8:45: key field 'code' cannot `collect`: rows are gathered by their key"
    ]


def test_collect_list_gathers_a_list_field_across_rows_without_duplicates(workdir: Path) -> None:
    write_workbook(workdir / "people.xlsx", {"People": [
        ["ID", "Delivery"], ["A1", "ONLINE"], ["A1", "ONCAMPUS; ONLINE"], ["A2", None], ["A2", "ONCAMPUS"],
        ["A3", "ONLINE;ONLINE"],
    ]})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: people.xlsx
entities:
  people:
    entity: applicant
    key: [external_id]
    fields:
      external_id: ID
      eligible_deliveries: {column: Delivery, split: ";", collect: list}
""")
    sources = read([workdir / "m.yaml"])
    assert messages(sources) == []
    records = {r.key[0]: r for r in sources.blocks[0].records}
    assert records["A1"].fields["eligible_deliveries"] == ["ONLINE", "ONCAMPUS"]
    assert records["A2"].fields["eligible_deliveries"] == ["ONCAMPUS"]
    assert records["A3"].fields["eligible_deliveries"] == ["ONLINE"]  # one row: no duplicates either
    assert str(records["A2"].place("eligible_deliveries")) == "people.xlsx › People › B5"


def test_lookup_maps_through_a_table_in_another_file_and_a_miss_suggests_the_closest_key(workdir: Path) -> None:
    write_workbook(workdir / "codes.xlsx", {"Read me": [["Codes used by the faculty office"]],
                                            "Faculties": [["Faculty codes"], [], ["Code", "Name"],
                                                          ["SCI", "Faculty of Science"], [851, "Engineering and IT"]]})
    write_workbook(workdir / "offerings.xlsx", {"Offerings": [
        ["Subject Code", "Faculty"], ["04101", "SCI"], ["04102", 851], ["04103", "SIC"], ["04104", None],
    ]})
    mapping = """\
version: 1
source: offerings.xlsx
entities:
  subjects:
    entity: subject
    key: [code]
    fields:
      code: Subject Code
      custom_attributes:
        Faculty: {column: Faculty, lookup: {source: codes.xlsx, sheet: Faculties, key: Code, value: Name}DEFAULT}
"""
    write_mapping(workdir / "m.yaml", mapping.replace("DEFAULT", ""))
    sources = read([workdir / "m.yaml"])
    assert messages(sources) == [
        "offerings.xlsx › Offerings › B4: custom_attributes.Faculty: expected a Code listed in codes.xlsx › Faculties "
        "(did you mean 'SCI'?), got 'SIC'"
    ]
    faculties = {r.key[0]: r.fields.get("custom_attributes") for r in sources.blocks[0].records}
    assert faculties == {"04101": {"Faculty": "Faculty of Science"}, "04102": {"Faculty": "Engineering and IT"},
                         "04104": None}
    assert "codes.xlsx" in sources.fingerprints
    write_mapping(workdir / "m.yaml", mapping.replace("DEFAULT", ", default: Unknown"))
    sources = read([workdir / "m.yaml"])
    assert messages(sources) == []
    assert sources.blocks[0].records[2].fields["custom_attributes"] == {"Faculty": "Unknown"}


def test_a_lookup_table_that_is_not_there_is_an_error_at_the_lookup(workdir: Path) -> None:
    write_workbook(workdir / "codes.xlsx", {"Faculties": [["Code", "Title"], ["SCI", "Science"]]})
    write_workbook(workdir / "offerings.xlsx", {"Offerings": [["Subject Code", "Faculty"], ["04101", "SCI"]]})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: offerings.xlsx
entities:
  subjects:
    entity: subject
    key: [code]
    fields:
      code: Subject Code
      name: {column: Faculty, lookup: {source: nowhere.xlsx, key: Code, value: Name}}
      custom_attributes:
        Faculty: {column: Faculty, lookup: {source: codes.xlsx, key: Code, value: Name}}
""")
    assert messages(read([workdir / "m.yaml"])) == [
        "m.yaml:9:39: source file not found: nowhere.xlsx",
        "m.yaml:11:44: no row near the top of codes.xlsx › Faculties holds both 'Code' and 'Name' "
        "(the first row's columns: 'Code', 'Title')",
    ]


def test_a_field_the_credential_type_does_not_take_is_a_warning_at_its_cell(workdir: Path) -> None:
    write_workbook(workdir / "quals.xlsx", {"Applicants 2027": QUALS})
    write_mapping(workdir / "m.yaml", QUAL_MAPPING.replace(
        '        when: {column: "Qual {n} Type", not_equals: Employment}\n', ""))
    sources = read([workdir / "m.yaml"])
    warnings = [f"{f.where}: {f.message}" for b in sources.blocks for f in b.findings if f.severity == "warning"]
    assert warnings == [
        "quals.xlsx › Applicants 2027 › H3: institutionCode (n=2): a credential of type EMPLOYMENT does not take "
        "institutionCode (it takes duration); the value is sent as read — leave it out for such rows with "
        "`when: {column: ..., not_equals: ...}`"
    ]
    by_type = {r.fields["type"]: r for r in sources.blocks[0].records}
    assert by_type["EMPLOYMENT"].fields["institutionCode"] == "ACME"


def test_repeat_fills_templates_values_and_where_values_too(workdir: Path) -> None:
    write_workbook(workdir / "pairs.xlsx", {"Pairs": [
        ["Code A", "Title A", "Code B", "Title B", "Keep"],
        ["X1", "Ex one", "Y1", "Why one", "A"],
        ["X2", "Ex two", "Y2", "Why two", "B"],
    ]})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: pairs.xlsx
entities:
  subjects:
    entity: subject
    repeat: {side: [A, B]}
    where: {column: Keep, in: ["{side}", both]}
    key: [code]
    fields:
      code: "Code {side}"
      name: {template: "{Title {side}} ({side})"}
      custom_attributes:
        Side: {value: "side {side}"}
""")
    sources = read([workdir / "m.yaml"])
    assert messages(sources) == []
    records = {r.key[0]: r.fields for r in sources.blocks[0].records}
    assert records == {
        "X1": {"code": "X1", "name": "Ex one (A)", "custom_attributes": {"Side": "side A"}},
        "Y2": {"code": "Y2", "name": "Why two (B)", "custom_attributes": {"Side": "side B"}},
    }


def test_collect_list_on_a_field_holding_one_value_is_refused_at_the_mapping(workdir: Path) -> None:
    write_workbook(workdir / "offerings.xlsx", {"Offerings": OFFERINGS})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: offerings.xlsx
entities:
  subjects:
    entity: subject
    key: [code]
    fields:
      code: Subject Code
      custom_attributes:
        Campus: {column: Campus, collect: list}
""")
    assert messages(read([workdir / "m.yaml"])) == [
        "m.yaml:10:43: `collect: list` makes a list, but custom_attributes.Campus holds one value; use "
        "`collect: join` (with `separator:`) to gather its values into one text"
    ]


def test_a_where_matches_that_runs_too_long_is_an_error_at_its_row_not_a_hang(workdir: Path) -> None:
    write_workbook(workdir / "s.xlsx", {"S": [["Code", "Note"], ["X1", "a" * 3000 + "!"], ["X2", "aa"]]})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: s.xlsx
entities:
  subjects:
    entity: subject
    where: {column: Note, matches: "^(a|aa)+$"}
    key: [code]
    fields:
      code: Code
""")
    sources = read([workdir / "m.yaml"])
    (found,) = messages(sources)
    assert found.startswith("s.xlsx › S › row 2: where: the regular expression '^(a|aa)+$' took over 0.25 s")
    assert [r.key for r in sources.blocks[0].records] == [("X2",)]
