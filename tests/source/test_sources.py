"""Rows x mapping -> desired records: the messy workbook, refs, keys, merging, several blocks."""

from __future__ import annotations

import datetime as dt
import gc
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from helpers.mapping import cache_formula_values, messages, read, write_mapping, write_workbook
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from loader.errors import MappingError
from loader.places import CellRef
from loader.source import readers
from loader.source import sources as records
from loader.source.readers import SheetData
from loader.source.records import Ref


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _messy_workbook(path: Path) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Curriculum"
    rows = [
        ["School Code", "Course Code", "Course Title", "Credit Points", "CRICOS", "Start", "Faculty Code", "Live"],
        ["SCI", "  BSC ", "Bachelor of Science ", 240, "00851", dt.date(2027, 2, 28), 851, "yes"],
        [None, "BSCA\u00a0", "Bachelor of Science (Advanced)", "300", None, "1/3/2027", 852, "N"],
        [None, "BSCH", "Bachelor of Science (Honours)", "=D2*2", "099", "2027-07-15", 7, "TRUE"],
        [],
        ["   ", "\u00a0", None, None, None, None, None, None],
        ["ENG", "BENG", "Bachelor of Engineering", "=D2+1", "12", None, None, None],
    ]
    for row in rows:
        sheet.append(row)
    sheet.merge_cells("A2:A4")  # a vertically merged School cell applies to every row it spans
    for address in ("G2", "G3", "G4"):
        sheet[address].number_format = "00000"  # displayed as 00851: a number, not text
    sheet.row_dimensions[3].hidden = True  # hidden rows are read like any other
    hidden = book.create_sheet("Schools")
    hidden.append(["Code", "Name"])
    hidden.append(["SCI", "Science"])
    hidden.append(["ENG", "Engineering"])
    hidden.sheet_state = "hidden"
    book.save(path)
    cache_formula_values(path, {"D4": "480"})  # D7 keeps no cached value, as openpyxl saves it
    return path


MESSY_MAPPING = """\
version: 1
source: messy.xlsx
entities:
  schools:
    entity: school
    sheet: Schools
    key: [code]
    fields:
      code: Code
      name: Name
  courses:
    entity: course
    sheet: Curriculum
    key: [code]
    fields:
      code: {column: Course Code, transform: [strip]}
      name: {column: Course Title, transform: [strip]}
      parent: {ref: school, column: School Code}
      custom_attributes:
        Credit Points: {column: Credit Points}
        CRICOS: {column: CRICOS}
        Start: {column: Start, type: date}
        Faculty Code: {column: Faculty Code}
        Live: {column: Live, map: {yes: "Y", N: "N"}}
"""


def test_messy_workbook_gives_exactly_the_expected_records(workdir: Path) -> None:
    _messy_workbook(workdir / "messy.xlsx")
    write_mapping(workdir / "m.yaml", MESSY_MAPPING)
    sources = read([workdir / "m.yaml"])
    schools, courses = sources.blocks
    assert sources.findings == ()
    assert schools.sheet == "Schools"
    assert [(r.key, dict(r.fields)) for r in schools.records] == [
        (("SCI",), {"code": "SCI", "name": "Science"}),
        (("ENG",), {"code": "ENG", "name": "Engineering"}),
    ]
    got = [(r.key, dict(r.fields), r.row.row) for r in courses.records]
    assert got == [
        (("BSC",), {
            "code": "BSC", "name": "Bachelor of Science", "parent": Ref("school", ("SCI",)),
            "custom_attributes": {"Credit Points": "240", "CRICOS": "00851", "Start": "2027-02-28",
                                  "Faculty Code": "00851", "Live": "Y"},
        }, 2),
        (("BSCA",), {
            "code": "BSCA", "name": "Bachelor of Science (Advanced)", "parent": Ref("school", ("SCI",)),
            "custom_attributes": {"Credit Points": "300", "Start": "2027-03-01", "Faculty Code": "00852",
                                  "Live": "N"},
        }, 3),
        (("BSCH",), {
            "code": "BSCH", "name": "Bachelor of Science (Honours)", "parent": Ref("school", ("SCI",)),
            "custom_attributes": {"Credit Points": "480", "CRICOS": "099", "Start": "2027-07-15",
                                  "Faculty Code": "00007", "Live": "TRUE"},
        }, 4),
        (("BENG",), {
            "code": "BENG", "name": "Bachelor of Engineering", "parent": Ref("school", ("ENG",)),
            "custom_attributes": {"CRICOS": "12"},
        }, 7),
    ]
    assert courses.rows_read == 4  # the two blank rows are neither read nor counted
    assert [(f.severity, f.code, str(f.where)) for f in courses.findings] == [
        ("warning", "formula-uncached", "messy.xlsx › Curriculum › D7"),
    ]
    # A reference names its cell through the record (the planner's unresolved-reference place).
    assert courses.records[2].place("parent") == CellRef("messy.xlsx", "Curriculum", "A4", 4)
    assert str(courses.records[0].place("custom_attributes.CRICOS")) == "messy.xlsx › Curriculum › E2"


def test_a_boolean_into_a_text_custom_attribute_is_an_error_at_its_cell(workdir: Path) -> None:
    _messy_workbook(workdir / "messy.xlsx")
    write_mapping(workdir / "m.yaml", MESSY_MAPPING.replace("map: {yes: \"Y\", N: \"N\"}", "type: boolean"))
    courses = read([workdir / "m.yaml"]).blocks[1]
    assert [str(f.where) for f in courses.errors] == [f"messy.xlsx › Curriculum › H{n}" for n in (2, 3, 4)]
    assert courses.errors[0].message == "custom_attributes.Live: expected string, got True"


def _flat(path: Path) -> Path:
    return write_workbook(path, {"Export": [
        ["School", "School Name", "Course", "Course Name", "Status"],
        ["SCI", "Science", "BSC", "Bachelor of Science", "Live"],
        ["SCI", "Science", "BA", "Bachelor of Arts", "Withdrawn"],
        ["SCI", "Science", "BSCA", "Advanced Science", "Live"],
        ["ENG", "Engineering", "BENG", "Engineering", "Live"],
        ["ENG", "Engineering (new)", "BENGH", "Engineering Honours", "Live"],
    ]})


FLAT_MAPPING = """\
version: 1
source: flat.xlsx
entities:
  schools:
    entity: school
    sheet: Export
    key: [code]
    fields:
      code: School
      name: School Name
  courses:
    entity: course
    sheet: Export
    where: {column: Status, not_in: [Withdrawn]}
    key: [code]
    fields:
      code: Course
      name: Course Name
      parent: {ref: school, column: School}
"""


def test_several_blocks_over_one_sheet_merge_identical_rows_and_name_both_cells_of_a_conflict(workdir: Path) -> None:
    _flat(workdir / "flat.xlsx")
    write_mapping(workdir / "m.yaml", FLAT_MAPPING)
    schools, courses = read([workdir / "m.yaml"]).blocks
    assert [r.key for r in schools.records] == [("SCI",)]  # ENG conflicts, so it is left out
    assert schools.records[0].row.row == 2
    assert [(f.code, str(f.where)) for f in schools.findings] == [
        ("duplicate-key", "flat.xlsx › Export › B6"),
    ]
    assert "'Engineering' and 'Engineering (new)'" in schools.findings[0].message
    assert "the other value is at flat.xlsx › Export › B5" in schools.findings[0].message
    assert [r.key for r in courses.records] == [("BSC",), ("BSCA",), ("BENG",), ("BENGH",)]
    assert (courses.rows_read, courses.rows_filtered) == (5, 1)


def test_where_conditions_all_hold_and_compare_cell_text(workdir: Path) -> None:
    write_workbook(workdir / "w.xlsx", {"S": [
        ["Code", "Active", "Points", "Note"],
        ["A", True, 101, "keep me"],
        ["B", False, 101, "keep"],
        ["C", True, 7, None],
        ["D", True, 101.0, ""],
    ]})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: w.xlsx
entities:
  s:
    entity: school
    where:
      - {column: Active, equals: true}
      - {column: Points, in: [101, 102]}
      - {column: Note, not_empty: true}
      - {column: Note, matches: "^keep"}
    key: [code]
    fields: {code: Code}
""")
    block = read([workdir / "m.yaml"]).blocks[0]
    assert [r.key for r in block.records] == [("A",)]
    assert block.rows_filtered == 3


def test_split_refs_keep_each_value_and_clear_gives_an_empty_list(workdir: Path) -> None:
    write_workbook(workdir / "arr.xlsx", {"Arrangements": [
        ["Code", "Title", "Status", "Subjects"],
        ["AR1", "One", "Live", "MATH101; PHYS101;"],
        ["AR2", "Two", "Draft", None],
    ]})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: arr.xlsx
entities:
  arrangements:
    entity: arrangement
    sheet: Arrangements
    key: [code]
    fields:
      code: Code
      name: Title
      status: {column: Status, map: {Live: ACTIVE, Draft: DRAFT}}
      subjects_awarded: {ref: subject, column: Subjects, split: ";", empty: clear}
""")
    block = read([workdir / "m.yaml"]).blocks[0]
    first, second = block.records
    assert first.fields["subjects_awarded"] == (Ref("subject", ("MATH101",)), Ref("subject", ("PHYS101",)))
    assert first.fields["status"] == "ACTIVE"
    assert second.fields["subjects_awarded"] == []
    assert block.findings == ()


def test_credential_key_holds_the_applicant_ref_and_pii_is_marked(workdir: Path) -> None:
    write_workbook(workdir / "c.csv.xlsx", {"Creds": [
        ["Applicant", "Type", "Name", "Email"],
        ["A1", "TERTIARY", "BSc", "a@example.edu"],
        ["A1", "SUBJECT", "", "b@example.edu"],
    ]})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: c.csv.xlsx
entities:
  creds:
    entity: credential
    sheet: Creds
    key: [applicant_id, type, name]
    fields:
      applicant_id: {ref: applicant, column: Applicant}
      type: Type
      name: {column: Name, pii: true}
""")
    block = read([workdir / "m.yaml"]).blocks[0]
    assert [r.key for r in block.records] == [(Ref("applicant", ("A1",), ("external_id",)), "TERTIARY", "BSc")]
    assert block.pii_fields == frozenset({"name"}) == block.records[0].pii
    assert [(f.code, str(f.where)) for f in block.findings] == [("empty-key", "c.csv.xlsx › Creds › C3")]


def test_row_errors_name_their_cells_and_schema_violations_their_field(workdir: Path) -> None:
    write_workbook(workdir / "a.xlsx", {"Applicants": [
        ["Id", "First", "Born", "Email", "Deliveries"],
        ["A1", "Ann", "next week", "ann@example.edu", "ONLINE, CAMPUS"],
        ["A2", "Bob", dt.date(2001, 5, 4), "not an email", None],
        ["A3", "Cy", "04/05/2001", "cy@example.edu", ""],
    ]})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: a.xlsx
entities:
  applicants:
    entity: applicant
    sheet: Applicants
    key: [external_id]
    fields:
      external_id: Id
      first_name: {column: First, empty: error}
      date_of_birth: Born
      email_address: {column: Email, pii: true}
      eligible_deliveries: {column: Deliveries}
""")
    block = read([workdir / "m.yaml"]).blocks[0]
    assert [(f.code, str(f.where)) for f in block.findings] == [
        ("bad-value", "a.xlsx › Applicants › C2"),
        ("schema", "a.xlsx › Applicants › D3"),
    ]
    assert "expected a date like 2027-02-28" in block.findings[0].message
    assert "'next week'" in block.findings[0].message
    assert [dict(r.fields) for r in block.records] == [
        {"external_id": "A3", "first_name": "Cy", "date_of_birth": "2001-05-04", "email_address": "cy@example.edu"},
    ]


def test_template_and_constant_fields(workdir: Path) -> None:
    write_workbook(workdir / "t.xlsx", {"S": [
        ["Code", "First Name", "Last Name"],
        ["X1", "Ada", "Lovelace"],
        ["X2", None, None],
    ]})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: t.xlsx
entities:
  s:
    entity: school
    key: [code]
    fields:
      code: Code
      name: {template: "{{{First Name}}} {Last Name}", default: Unnamed}
      custom_attributes:
        Intake: {value: 2027}
""")
    block = read([workdir / "m.yaml"]).blocks[0]
    assert [dict(r.fields) for r in block.records] == [
        {"code": "X1", "name": "{Ada} Lovelace", "custom_attributes": {"Intake": "2027"}},
        {"code": "X2", "name": "Unnamed", "custom_attributes": {"Intake": "2027"}},
    ]
    assert block.records[0].place("name") == CellRef("t.xlsx", "S", "B2", 2)


def test_missing_sheet_and_column_are_mapping_errors_listing_what_exists(workdir: Path) -> None:
    _flat(workdir / "flat.xlsx")
    write_mapping(workdir / "m.yaml", FLAT_MAPPING.replace("sheet: Export\n    where", "sheet: export\n    where")
                  .replace("code: School\n", "code: school \n"))
    sources = read([workdir / "m.yaml"])
    assert sources.blocks == ()
    assert messages(sources) == [
        "m.yaml:9:13: no column 'school' in flat.xlsx › Export (header row 1); the columns are: 'School', "
        "'School Name', 'Course', 'Course Name', 'Status' (did you mean 'School'?)",
        "m.yaml:13:12: flat.xlsx has no sheet 'export'; its sheets are: 'Export' (did you mean 'Export'?)",
    ]


def test_a_missing_mapping_file_raises_listing_every_missing_file(workdir: Path) -> None:
    with pytest.raises(MappingError) as caught:
        read([workdir / "one.yaml", workdir / "two.yaml"])
    assert "one.yaml: file not found" in caught.value.message
    assert "two.yaml: file not found" in caught.value.message


def test_a_missing_source_is_an_error_at_the_source_line(workdir: Path) -> None:
    write_mapping(workdir / "m.yaml", FLAT_MAPPING)
    sources = read([workdir / "m.yaml"])
    assert messages(sources) == ["m.yaml:2:9: source file not found: flat.xlsx"] * 2
    assert sources.has_errors


def test_fingerprints_cover_mapping_files_and_sources(workdir: Path) -> None:
    _flat(workdir / "flat.xlsx")
    write_mapping(workdir / "m.yaml", FLAT_MAPPING)
    assert sorted(read([workdir / "m.yaml"]).fingerprints) == ["flat.xlsx", "m.yaml"]


_any_text = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=15).filter(
    lambda t: not t.startswith("=")
)
_any_cell = st.one_of(
    st.none(), _any_text, st.integers(-(10**15), 10**15), st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(), st.dates(min_value=dt.date(1900, 3, 1), max_value=dt.date(2100, 1, 1)),
    st.sampled_from(["2027-02-28", "31/12/1999", "yes", "  ", "\u00a0", "007", "1,2;3"]),
)
PROPERTY_MAPPING = """\
version: 1
source: p.xlsx
entities:
  applicants:
    entity: applicant
    sheet: S
    key: [external_id]
    fields:
      external_id: Id
      first_name: {column: First, transform: [strip], max_length: 10}
      date_of_birth: {column: Born, empty: clear}
      eligible_deliveries: {column: Deliveries, split: ";"}
      custom_attributes:
        Score: {column: Score, empty: error}
"""
# Cells every step and the applicant schema accept: a row made of these must give a record.
_valid_cells = st.tuples(
    st.none() | st.text(st.characters(min_codepoint=ord("a"), max_codepoint=ord("z")), min_size=1, max_size=10),
    st.none() | st.dates(min_value=dt.date(1900, 3, 1), max_value=dt.date(2100, 1, 1)) | st.just("28/02/2001"),
    st.sampled_from([None, "ONLINE", "ONLINE; CAMPUS", "  ;ONLINE"]),
    st.integers(-(10**9), 10**9) | st.sampled_from(["A+", "007", "high"]),
)
_any_row = st.tuples(_any_cell, _any_cell, _any_cell, _any_cell)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.just(False), _any_row) | st.tuples(st.just(True), _valid_cells), min_size=1,
                     max_size=8))
def test_arbitrary_cells_give_each_row_a_record_or_an_error_at_a_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: list[tuple[bool, tuple[object, ...]]]
) -> None:
    """`rows` pairs cells with whether they surely make a record (False: they may or may not)."""
    monkeypatch.chdir(tmp_path)
    write_workbook(tmp_path / "p.xlsx", {"S": [
        ["Id", "First", "Born", "Deliveries", "Score"],
        *([f"K{n}", *cells] for n, (_, cells) in enumerate(rows)),
    ]})
    write_mapping(tmp_path / "m.yaml", PROPERTY_MAPPING)
    sources = read([tmp_path / "m.yaml"])
    assert sources.findings == ()
    block = sources.blocks[0]
    assert block.rows_read == len(rows)
    built = {r.row.row for r in block.records}
    event(f"records built: {'some' if built else 'none'}")
    for number, (surely_valid, _) in enumerate(rows, start=2):
        errors = [f for f in block.findings if f.where and str(f.where).startswith("p.xlsx › S › ")
                  and str(f.where).removeprefix("p.xlsx › S › ")[1:] == str(number)]
        assert (number in built) != bool(errors), (number, block.findings)
        assert number in built or not surely_valid, (number, block.findings)
    for record in block.records:
        assert record.key == (f"K{(record.row.row or 0) - 2}",)
        assert isinstance(record.fields["custom_attributes"]["Score"], str)


def test_the_property_mapping_builds_a_record_from_valid_cells(workdir: Path) -> None:
    write_workbook(workdir / "p.xlsx", {"S": [
        ["Id", "First", "Born", "Deliveries", "Score"],
        ["K0", " ann ", dt.date(2001, 2, 28), "ONLINE; CAMPUS", 97],
        ["K1", "bo", None, None, None],
    ]})
    write_mapping(workdir / "m.yaml", PROPERTY_MAPPING)
    block = read([workdir / "m.yaml"]).blocks[0]
    assert [dict(r.fields) for r in block.records] == [{
        "external_id": "K0", "first_name": "ann", "date_of_birth": "2001-02-28",
        "eligible_deliveries": ["ONLINE", "CAMPUS"], "custom_attributes": {"Score": "97"},
    }]
    assert [(f.code, str(f.where)) for f in block.findings] == [("empty-value", "p.xlsx › S › E3")]


PII_MAPPING = """\
version: 1
source: people.xlsx
entities:
  applicants:
    entity: applicant
    key: [external_id]
    fields:
      external_id: Id
      email_address: {column: Email, pii: true}
      first_name: {column: First, pii: true, pattern: "[A-Z][a-z]+"}
      last_name: {column: Last, pii: true, max_length: 5}
      custom_attributes:
        Phone: {column: Phone, pii: true}
"""


def test_findings_about_pii_fields_never_show_their_values(workdir: Path) -> None:
    write_workbook(workdir / "people.xlsx", {"People": [
        ["Id", "Email", "First", "Last", "Phone"],
        ["A1", "not-an-email", "Ann", "Lee", "0400 000 001"],
        ["A2", "bo@example.edu", "bo-secret", "Lee", "0400 000 002"],
        ["A3", "cy@example.edu", "Cy", "Lee-Secret", "0400 000 003"],
        ["A4", "di@example.edu", "Di", "Ng", "0400 000 004"],
        ["A4", "di.ng@example.edu", "Di", "Ng", "0400 000 004"],
        ["A5", "ed@example.edu", "Ed", "Wu", "0400 000 005"],
        ["A5", "ed@example.edu", "Ed", "Wu", "+61 400 000 005"],
    ]})
    write_mapping(workdir / "m.yaml", PII_MAPPING)
    block = read([workdir / "m.yaml"]).blocks[0]
    assert [(f.code, str(f.where), f.message) for f in block.findings] == [
        ("schema", "people.xlsx › People › B2",
         "email_address: expected text matching '^[^@\\\\s]+@[^@\\\\s]+\\\\.[^@\\\\s]+$', got (hidden)"),
        ("bad-value", "people.xlsx › People › C3",
         "first_name: expected text matching pattern '[A-Z][a-z]+', got (hidden)"),
        ("bad-value", "people.xlsx › People › D4", "last_name: expected at most 5 characters, got 10: (hidden)"),
        ("duplicate-key", "people.xlsx › People › B6",
         "key ('A4') has different values for email_address: (hidden) and (hidden); "
         "rows with one key must agree (the record is left out; the other value is at people.xlsx › People › B5)"),
        ("duplicate-key", "people.xlsx › People › E8",
         "key ('A5') has different values for custom_attributes.Phone: (hidden) and (hidden); "
         "rows with one key must agree (the record is left out; "
         "the other value is at people.xlsx › People › E7)"),
    ]
    shown = "\n".join(messages(read([workdir / "m.yaml"])))
    for secret in ("not-an-email", "secret", "Secret", "di@", "di.ng@", "0400", "+61"):
        assert secret not in shown
    assert [r.key for r in block.records] == []
    # every row left out, with its key: the planner reports their live records as blocked
    assert [(str(r.row), r.key, [f.code for f in r.errors]) for r in block.left_out] == [
        ("people.xlsx › People › row 2", ("A1",), ["schema"]),
        ("people.xlsx › People › row 3", ("A2",), ["bad-value"]),
        ("people.xlsx › People › row 4", ("A3",), ["bad-value"]),
        ("people.xlsx › People › row 5", ("A4",), ["duplicate-key"]),
        ("people.xlsx › People › row 6", ("A4",), ["duplicate-key"]),
        ("people.xlsx › People › row 7", ("A5",), ["duplicate-key"]),
        ("people.xlsx › People › row 8", ("A5",), ["duplicate-key"]),
    ]


def test_reading_leaves_the_garbage_collector_running(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The planner reads on a worker thread while its event loop fetches pages: gc is process-wide."""
    seen: list[bool] = []
    reader = readers.read_source  # what loader.source.sources imported and calls

    def read_source(*args: Any, **kwargs: Any) -> SheetData:
        seen.append(gc.isenabled())
        return reader(*args, **kwargs)

    monkeypatch.setattr(records, "read_source", read_source)
    write_workbook(workdir / "people.xlsx", {"People": [["Id", "Email", "First", "Last", "Phone"], ["A1"]]})
    write_mapping(workdir / "m.yaml", PII_MAPPING)
    read([workdir / "m.yaml"])
    assert seen == [True]


def test_a_csv_block_reads_text_with_its_delimiter_and_names_cells_without_a_sheet(workdir: Path) -> None:
    (workdir / "subjects.csv").write_bytes("\ufeffCode;Name;Parent\n0101;Maths ;BSC\n\n0102;;BSC\n".encode())
    write_mapping(workdir / "m.yaml", """\
version: 1
source: subjects.csv
delimiter: ";"
entities:
  subjects:
    entity: subject
    key: [code]
    fields:
      code: Code
      name: {column: Name, transform: [strip], empty: error}
      parent: {ref: program, column: Parent}
""")
    block = read([workdir / "m.yaml"]).blocks[0]
    assert (block.sheet, block.rows_read) == (None, 2)
    assert [dict(r.fields) for r in block.records] == [
        {"code": "0101", "name": "Maths", "parent": Ref("program", ("BSC",))},
    ]
    assert [str(f.where) for f in block.findings] == ["subjects.csv › B4"]


def test_empty_modes_skip_clear_and_error(workdir: Path) -> None:
    write_workbook(workdir / "e.xlsx", {"S": [
        ["Id", "First", "Last", "Born"],
        ["A1", None, None, None],
        ["A2", "Ann", "Lee", "2001-02-03"],
    ]})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: e.xlsx
entities:
  a:
    entity: applicant
    key: [external_id]
    fields:
      external_id: Id
      first_name: First
      last_name: {column: Last, empty: clear}
      date_of_birth: {column: Born, empty: error}
""")
    block = read([workdir / "m.yaml"]).blocks[0]
    assert [dict(r.fields) for r in block.records] == [
        {"external_id": "A2", "first_name": "Ann", "last_name": "Lee", "date_of_birth": "2001-02-03"},
    ]
    assert [(f.code, str(f.where)) for f in block.findings] == [("empty-value", "e.xlsx › S › D2")]
    write_mapping(workdir / "m.yaml", (workdir / "m.yaml").read_text().replace("empty: error", "empty: skip"))
    first = read([workdir / "m.yaml"]).blocks[0].records[0]
    assert dict(first.fields) == {"external_id": "A1", "last_name": None}
    assert dict(first.cells) == {
        "external_id": CellRef("e.xlsx", "S", "A2", 2), "last_name": CellRef("e.xlsx", "S", "C2", 2),
    }


def test_a_header_row_with_nothing_in_it_is_an_error_at_the_block(workdir: Path) -> None:
    write_workbook(workdir / "h.xlsx", {"S": [["Code"], ["X"]]})
    write_mapping(workdir / "m.yaml", """\
version: 1
source: h.xlsx
entities:
  s:
    entity: school
    header_row: 4
    key: [code]
    fields: {code: Code}
""")
    assert messages(read([workdir / "m.yaml"])) == [
        "m.yaml:6:17: header row 4 of h.xlsx › S is empty; row 1 holds every column this block names: "
        "set `header_row: 1` (or `header_row: auto`)"
    ]
