"""`loader test`: given rows in, expected records out, offline; a failure shows the diff and exits 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.mapping import write_workbook

from loader.cli import main

REPO = Path(__file__).resolve().parents[2]

UNITS = """\
version: 1
source: units.xlsx
entities:
  units:
    entity: subject
    sheet: Units
    where: {column: Status, not_in: [Withdrawn]}
    key: [code]
    fields:
      code: {column: Unit Code, transform: [strip, upper]}
      name: {column: Title, transform: [strip, collapse_spaces]}
      parent: {ref: program, column: Program}
      custom_attributes:
        Credit Points: {column: Credit Points, type: string, pattern: {regex: '[0-9]+', message: a whole number}}
        Faculty: {column: Faculty, lookup: {sheet: Faculties, key: Code, value: Name}}
"""

PASSING = """\
mapping: ../units.yaml
block: units
cases:
  - name: codes are upper-cased and keep their zeros
    given:
      - {Unit Code: " comp0010", Title: " Intro  to Computing ", Credit Points: "10", Program: BSC, Faculty: FOA}
    lookups: {Faculties: {FOA: Faculty of Arts}}
    expect:
      - {code: COMP0010, name: Intro to Computing, parent: BSC,
         custom_attributes: {Credit Points: "10", Faculty: Faculty of Arts}}
  - name: withdrawn units are left out
    given: [{Unit Code: X1, Title: Old, Status: Withdrawn}]
    expect: []
  - name: a bad credit value is an error at its cell
    given: [{Unit Code: X2, Title: T, Credit Points: ten}]
    errors: [{column: Credit Points, contains: "a whole number"}]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mappings" / "tests").mkdir(parents=True)
    write_workbook(tmp_path / "mappings" / "units.xlsx", {
        "Units": [["Unit Code", "Title", "Credit Points", "Program", "Faculty", "Status"],
                  ["MATH1", "Maths", 6, "BSC", "FOA", "Active"]],
        "Faculties": [["Code", "Name"], ["FOA", "Faculty of Arts"]],
    })
    (tmp_path / "mappings" / "units.yaml").write_text(UNITS)
    return tmp_path


def _write_test(project: Path, text: str, name: str = "units.test.yaml") -> Path:
    path = project / "mappings" / "tests" / name
    path.write_text(text)
    return path


def test_passing_tests_exit_0_and_say_each_case(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_test(project, PASSING)
    assert main(["test"]) == 0
    out = capsys.readouterr().out
    assert "ok    mappings/tests/units.test.yaml › codes are upper-cased and keep their zeros" in out
    assert "3 cases in 1 test file: all passed" in out


def test_a_failing_case_prints_the_case_the_record_and_a_field_diff_and_exits_1(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_test(project, PASSING.replace("name: Intro to Computing", "name: Intro To Computing"))
    assert main(["test"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  mappings/tests/units.test.yaml:4:5 › codes are upper-cased and keep their zeros" in out
    assert "units record COMP0010 differs" in out
    assert '    name   "Intro To Computing"  "Intro to Computing"' in out
    assert "3 cases in 1 test file: 1 failure" in out


def test_0010_stays_0010_and_is_never_the_number_10(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = """\
mapping: ../units.yaml
cases:
  - name: zeros
    given: [{Unit Code: "0010", Title: T}]
    expect: [{code: 0010}]
  - name: not ten
    given: [{Unit Code: 0010, Title: T}]
    expect: [{code: 10}]
"""
    _write_test(project, case)
    assert main(["test"]) == 1
    out = capsys.readouterr().out
    assert "ok    mappings/tests/units.test.yaml › zeros" in out
    assert "expected a units record 10, none was built" in out
    assert "a units record 0010 was built that the case does not expect" in out


def test_missing_and_extra_records_fail_and_order_is_free(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = """\
mapping: ../units.yaml
cases:
  - name: order free
    given: [{Unit Code: A1, Title: A}, {Unit Code: B1, Title: B}]
    expect: [{code: B1, name: B}, {code: A1}]
  - name: one missing, one extra
    given: [{Unit Code: A1, Title: A}]
    expect: [{code: C1}]
"""
    _write_test(project, case)
    assert main(["test"]) == 1
    out = capsys.readouterr().out
    assert "ok    mappings/tests/units.test.yaml › order free" in out
    assert "expected a units record C1, none was built" in out
    assert "a units record A1 was built that the case does not expect" in out


def test_an_unexpected_error_and_an_error_not_given_fail(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = """\
mapping: ../units.yaml
cases:
  - name: unexpected
    given: [{Unit Code: X2, Title: T, Credit Points: ten}]
    expect: []
  - name: not given
    given: [{Unit Code: X2, Title: T, Credit Points: "10"}]
    errors: [{column: Credit Points, contains: a whole number}]
"""
    _write_test(project, case)
    assert main(["test"]) == 1
    out = capsys.readouterr().out
    assert "unexpected error: given › X2 › " in out  # the given record, by its key
    assert "expected an error at column 'Credit Points' containing 'a whole number'; errors given: none" in out


def test_references_resolve_only_against_the_records_a_case_lists(project: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    case = """\
mapping: ../units.yaml
cases:
  - name: known program
    given: [{Unit Code: A1, Title: A, Program: BSC}]
    records: {program: [BSC]}
    expect: [{code: A1, parent: BSC}]
  - name: unknown program
    given: [{Unit Code: A1, Title: A, Program: BXX}]
    records: {program: [BSC]}
    expect: [{code: A1}]
"""
    _write_test(project, case)
    assert main(["test"]) == 1
    out = capsys.readouterr().out
    assert "ok    mappings/tests/units.test.yaml › known program" in out
    assert "parent names program BXX, which is not among the case's records" in out


def test_json_output_is_one_document_with_the_diffs(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_test(project, PASSING.replace("name: Intro to Computing", "name: Other"))
    assert main(["test", "--format", "json", "mappings/tests"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["counts"] == {"files": 1, "cases": 3, "failed": 1, "problems": 0, "drafts": 0}
    failure = document["tests"][0]["cases"][0]["failures"][0]
    assert failure["record"] == "COMP0010"
    assert failure["diffs"] == [{"field": "name", "expected": "Other", "built": "Intro to Computing"}]


def test_github_output_annotates_the_failing_case_at_its_line(project: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    _write_test(project, PASSING.replace("name: Intro to Computing", "name: Other"))
    assert main(["test", "--format", "github"]) == 1
    out = capsys.readouterr().out
    assert "::error file=mappings/tests/units.test.yaml,line=4,col=5,title=loader test%3A codes are" in out


def test_a_test_file_naming_a_block_the_mapping_lacks_is_a_problem_not_a_traceback(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_test(project, PASSING.replace("block: units", "block: unit"))
    assert main(["test"]) == 1
    assert "the mapping has no valid block 'unit' (its blocks: units)" in capsys.readouterr().out


def test_an_invalid_test_file_names_the_place(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_test(project, "mapping: ../units.yaml\ncases:\n  - name: x\n    gven: []\n")
    assert main(["test"]) == 1
    assert "mappings/tests/units.test.yaml:4:5" in capsys.readouterr().out


def test_validate_runs_the_tests_of_the_mappings_it_checks(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_test(project, PASSING.replace("name: Intro to Computing", "name: Other"))
    assert main(["validate", "mappings/units.yaml"]) == 1
    out = capsys.readouterr().out
    assert "valid: 0 errors, 0 warnings" in out
    assert "units record COMP0010 differs" in out
    _write_test(project, PASSING)
    assert main(["validate", "mappings/units.yaml"]) == 0


def test_json_and_xml_blocks_take_documents(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "mappings" / "feeds.yaml").write_text("""\
version: 1
sources:
  catalogue: {json: catalogue.json, records: "$.items[*]"}
  feed: {xml: feed.xml, records: "//course"}
entities:
  from_json:
    entity: subject
    source: catalogue
    key: [code]
    fields: {code: unit.code, name: title}
  from_xml:
    entity: course
    source: feed
    key: [code]
    fields: {code: {column: "@id"}, name: {column: title}}
""")
    _write_test(project, """\
mapping: ../feeds.yaml
block: from_json
cases:
  - name: a json record
    given_json: {items: [{unit: {code: "0042"}, title: Maths}]}
    expect: [{code: "0042", name: Maths}]
""", "json.test.yaml")
    _write_test(project, """\
mapping: ../feeds.yaml
block: from_xml
cases:
  - name: an xml record
    given_xml: <catalog><course id="C1"><title>Course One</title></course></catalog>
    expect: [{code: C1, name: Course One}]
""", "xml.test.yaml")
    assert main(["test", "mappings/tests/json.test.yaml", "mappings/tests/xml.test.yaml"]) == 0, \
        capsys.readouterr().out


def test_the_sample_projects_tests_pass(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(REPO)
    assert main(["test"]) == 0, capsys.readouterr().out


def test_loader_test_imports_no_http_client_driver_or_dataframe_library() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOADER_")}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "loader", "test"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert "loader" in imported
    assert not imported & {"httpx", "aiohttp", "sqlalchemy", "psycopg", "pandas", "polars", "pyarrow"}


def test_validate_json_carries_the_tests_and_fits_the_output_schema(project: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import jsonschema

    from loader.files.package_data import schema

    _write_test(project, PASSING)
    assert main(["validate", "mappings/units.yaml", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["tests"]["counts"]["cases"] == 3
    assert list(jsonschema.Draft202012Validator(schema("output.schema.json")).iter_errors(document)) == []


def test_record_level_checks_judge_a_case_and_whole_set_checks_do_not(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mapping = project / "mappings" / "units.yaml"
    mapping.write_text(UNITS + """    checks:
      - {expect: rows, min: 1000, severity: error}
      - {expect: in, field: parent, values: [BSC], severity: error}
""")
    _write_test(project, """\
mapping: ../units.yaml
cases:
  - name: a program the check does not allow
    given: [{Unit Code: A1, Title: A, Program: BA}]
    errors: [{column: Program, contains: "not one of BSC"}]
  - name: one row is not a thousand, and that is no failure
    given: [{Unit Code: A1, Title: A, Program: BSC}]
    expect: [{code: A1}]
""")
    assert main(["test"]) == 0, capsys.readouterr().out
