"""`checks:` on a block's records: each kind at both severities, record-level and set-level blocking,
reported once per check with its count and first records, personal values masked."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.mapping import write_workbook

from loader.profile import load_profile
from loader.source.sources import SourceSet, read_sources

MAPPING = """\
version: 1
source: u.xlsx
entities:
  programs:
    entity: program
    sheet: Programs
    key: [code]
    fields: {{code: Code, name: Name}}
  units:
    entity: subject
    sheet: Units
    key: [code]
    fields:
      code: Code
      name: Title
      parent: {{ref: program, column: Program}}
      custom_attributes:
        Credit Points: {{column: CP, type: string}}
    checks:
      - {check}
"""

UNITS: list[list[str | None]] = [["Code", "Title", "CP", "Program"],
         ["MATH1001", "Maths", "6", "BSC"],
         ["MATH1002", "Maths", "7.5", "BSC"],
         ["X", "Stats", "6", None],
         ["STAT1001", "Stats II", "6", "BSC"]]


def _read(tmp_path: Path, check: str, *, units: list[list[str | None]] | None = None) -> SourceSet:
    write_workbook(tmp_path / "u.xlsx", {"Units": units or UNITS, "Programs": [["Code", "Name"], ["BSC", "Science"],
                                                                              ["BA", "Arts"]]})
    (tmp_path / "m.yaml").write_text(MAPPING.format(check=check))
    return read_sources([tmp_path / "m.yaml"], load_profile())


def _units(sources: SourceSet) -> tuple[list[str], list[str]]:
    """The units built, and the messages of their findings."""
    block = next(b for b in sources.blocks if b.block == "units")
    return [r.key[0] for r in block.records], [f"{f.severity}: {f.message}" for f in block.findings]


@pytest.mark.parametrize(("check", "failing", "says"), [
    ('{expect: in, field: custom_attributes.Credit Points, values: ["6", "12"]}', ["MATH1002"],
     "check in custom_attributes.Credit Points fails for subject MATH1002: not one of 6, 12, got '7.5'"),
    ('{expect: pattern, field: code, regex: "[A-Z]{4}[0-9]{4}"}', ["X"],
     "check pattern code fails for subject X: does not match [A-Z]{4}[0-9]{4}, got 'X'"),
    ("{expect: not_empty, field: parent}", ["X"], "check not_empty parent fails for subject X: empty"),
])
@pytest.mark.parametrize("severity", ["warn", "error"])
def test_a_record_level_check_warns_or_blocks_only_the_records_it_fails(
        tmp_path: Path, check: str, failing: list[str], says: str, severity: str) -> None:
    sources = _read(tmp_path, check[:-1] + f", severity: {severity}}}")
    built, messages = _units(sources)
    level = "error" if severity == "error" else "warning"
    assert messages == [f"{level}: {says}"]
    every = ["MATH1001", "MATH1002", "X", "STAT1001"]
    assert built == ([k for k in every if k not in failing] if severity == "error" else every)
    block = next(b for b in sources.blocks if b.block == "units")
    assert [o.key[0] for o in block.left_out if o.key] == (failing if severity == "error" else [])


@pytest.mark.parametrize(("check", "says"), [
    ("{expect: unique, fields: [name]}",
     "units: check unique (name) fails: 2 records share their values with another (first: MATH1001, MATH1002)"),
    ("{expect: rows, min: 10}", "units: check rows (at least 10) fails: 4 records built"),
    ("{expect: rows, max: 3}", "units: check rows (at most 3) fails: 4 records built"),
    ("{expect: not_empty, field: parent, max_share: 10%}",
     "units: check not_empty parent fails: 1 of 4 records empty (25%, at most 10% allowed) (first: X)"),
])
@pytest.mark.parametrize("severity", ["warn", "error"])
def test_a_set_level_check_is_one_finding_at_its_line_and_an_error_blocks_the_whole_block(
        tmp_path: Path, check: str, says: str, severity: str) -> None:
    sources = _read(tmp_path, check[:-1] + f", severity: {severity}}}")
    built, messages = _units(sources)
    if severity == "error":
        assert messages == [f"error: {says}; the block is blocked"]
        assert built == []
    else:
        assert messages == [f"warning: {says}"]
        assert len(built) == 4
    block = next(b for b in sources.blocks if b.block == "units")
    assert str(block.findings[0].where).endswith("m.yaml:20:9")  # the check's line


def test_checks_that_pass_say_nothing(tmp_path: Path) -> None:
    sources = _read(tmp_path, '{expect: in, field: custom_attributes.Credit Points, values: ["6", "7.5"], '
                              "severity: error}")
    assert _units(sources) == (["MATH1001", "MATH1002", "X", "STAT1001"], [])


def test_checks_count_after_rows_merge(tmp_path: Path) -> None:
    units: list[list[str | None]] = [*UNITS, ["MATH1001", "Maths", "6", "BSC"]]  # an identical row merges
    sources = _read(tmp_path, "{expect: unique, fields: [code], severity: error}", units=units)
    assert _units(sources) == (["MATH1001", "MATH1002", "X", "STAT1001"], [])


def test_checks_count_after_where(tmp_path: Path) -> None:
    write_workbook(tmp_path / "u.xlsx", {"Units": UNITS, "Programs": [["Code", "Name"], ["BSC", "Science"]]})
    text = MAPPING.format(check="{expect: not_empty, field: parent, severity: error}")
    (tmp_path / "m.yaml").write_text(text.replace("    sheet: Units\n", "    sheet: Units\n"
                                                                        "    where: {column: Code, not_in: [X]}\n"))
    assert _units(read_sources([tmp_path / "m.yaml"], load_profile())) == (["MATH1001", "MATH1002", "STAT1001"], [])


def test_every_program_has_a_subject(tmp_path: Path) -> None:
    write_workbook(tmp_path / "u.xlsx", {"Units": UNITS, "Programs": [["Code", "Name"], ["BSC", "Science"],
                                                                      ["BA", "Arts"]]})
    text = MAPPING.format(check="{expect: rows, min: 1}").replace(
        "    fields: {code: Code, name: Name}\n",
        "    fields: {code: Code, name: Name}\n    checks: [{expect: every, has: subject, via: parent}]\n")
    (tmp_path / "m.yaml").write_text(text)
    sources = read_sources([tmp_path / "m.yaml"], load_profile())
    assert [f.message for f in sources.findings] == [
        "check every record has a subject (via parent) fails for program BA: no subject names it in parent"]
    assert sources.findings[0].severity == "warning"


def test_a_check_naming_a_field_the_block_does_not_set_is_a_mapping_error_at_its_line(tmp_path: Path) -> None:
    sources = _read(tmp_path, "{expect: in, field: nme, values: [a]}")
    assert [(str(f.where).rsplit("/", 1)[-1], f.message) for f in sources.findings] == [
        ("m.yaml:20:9", "check `in` names 'nme', which this block does not set (it sets: code, name, parent, "
                        "custom_attributes.Credit Points)")]
    assert [b.block for b in sources.blocks] == ["programs"]


def test_a_personal_value_is_masked_in_a_check_finding(tmp_path: Path) -> None:
    write_workbook(tmp_path / "p.xlsx", {"People": [["ID", "Email"], ["A1", "someone@example.invalid"]]})
    (tmp_path / "p.yaml").write_text("""\
version: 1
source: p.xlsx
entities:
  people:
    entity: applicant
    key: [external_id]
    fields:
      external_id: ID
      email_address: {column: Email, pii: true}
    checks:
      - {expect: pattern, field: email_address, regex: "[a-z]+@example[.]edu", severity: error}
""")
    sources = read_sources([tmp_path / "p.yaml"], load_profile())
    (finding,) = sources.blocks[0].findings
    assert "someone" not in finding.message
    assert finding.message.endswith("got (hidden)")


def test_a_rows_check_without_bounds_and_a_drift_field_the_block_does_not_set_are_mapping_errors(
        tmp_path: Path) -> None:
    sources = _read(tmp_path, "{expect: rows}")
    assert [f.message for f in sources.findings] == ["check `rows` needs `min`, `max` or both"]
    text = MAPPING.format(check="{expect: rows, min: 1}") + "    drift: {rows: 10%, values: [nme, name]}\n"
    (tmp_path / "m.yaml").write_text(text)
    sources = read_sources([tmp_path / "m.yaml"], load_profile())
    assert [f.message for f in sources.findings] == ["drift values: 'nme' is not a field this block sets"]


def test_a_personal_field_in_drift_values_is_a_mapping_error(tmp_path: Path) -> None:
    write_workbook(tmp_path / "p.xlsx", {"People": [["ID", "Email"], ["A1", "someone@example.invalid"]]})
    (tmp_path / "p.yaml").write_text("""\
version: 1
source: p.xlsx
entities:
  people:
    entity: applicant
    key: [external_id]
    fields:
      external_id: ID
      email_address: {column: Email, pii: true}
    drift: {values: [email_address]}
""")
    sources = read_sources([tmp_path / "p.yaml"], load_profile())
    assert [f.message for f in sources.findings] == [
        "drift values: 'email_address' is personal: its values are never recorded"]
