"""One finding per cause (loader.report.finding_groups): what a report shows of many findings of one cause."""

from __future__ import annotations

from pathlib import Path

from helpers.mapping import write_mapping, write_workbook

from loader.findings import Finding
from loader.places import CellRef, FilePlace, MappingPlace
from loader.profile import load_profile
from loader.report.finding_groups import group_findings
from loader.source.sources import read_sources

RULE = MappingPlace("m.yaml", 9, 7)


def _cell(row: int) -> CellRef:
    return CellRef("in.xlsx", "Subjects", f"D{row}", row)


def _bad(row: int, value: str) -> Finding:
    return Finding("error", "bad-value", f"level: expected a whole number, got {value!r}", _cell(row),
                   "level: expected a whole number", RULE, f"S{row}")


def test_a_cause_found_once_is_shown_as_it_was_with_its_key_beside_its_cell() -> None:
    [shown] = group_findings([("subjects", "subjects", _bad(2, "ten"))])
    assert (shown.count, shown.text, shown.place_text) == (
        1, "level: expected a whole number, got 'ten'", "in.xlsx › Subjects › D2 (S2)")


def test_findings_of_one_cause_are_one_at_the_mapping_line_with_the_count_and_the_first_three_cells() -> None:
    found = [("subjects", "subjects", _bad(row, f"x{row}")) for row in range(2, 9)]
    [shown] = group_findings(found)
    assert shown.where == RULE and shown.count == 7
    assert shown.cells == ("D2 (S2): 'x2'", "D3 (S3): 'x3'", "D4 (S4): 'x4'")
    assert shown.text == ("level: expected a whole number — 7 rows of in.xlsx › Subjects, "
                          "first: D2 (S2): 'x2'; D3 (S3): 'x3'; D4 (S4): 'x4'")


def test_causes_stay_apart_by_block_code_and_rule_and_in_the_order_first_found() -> None:
    other_rule = Finding("error", "bad-value", "level: expected a whole number, got 'y'", _cell(5),
                         "level: expected a whole number", MappingPlace("m.yaml", 20, 7))
    found = [("a", "a", _bad(2, "x")), ("b", "b", _bad(3, "x")), ("a", "a", other_rule), ("a", "a", _bad(4, "x"))]
    shown = group_findings(found)
    assert [(s.context, s.count) for s in shown] == [("a", 2), ("b", 1), ("a", 1)]


def test_findings_about_a_whole_file_are_never_merged() -> None:
    missing = Finding("error", "source-missing", "source file not found: x.xlsx", FilePlace("x.xlsx"))
    assert len(group_findings([("", "", missing), ("", "", missing)])) == 2


def test_findings_about_records_are_counted_as_records_under_their_block() -> None:
    found = [(f"subjects/S{n}", "subjects", Finding("warning", "read-only-field",
                                                    f"access can only be set at creation: live 'A', source 'B{n}'",
                                                    _cell(n), "access can only be set at creation", key=f"S{n}"))
             for n in range(2, 6)]
    [shown] = group_findings(found)
    assert shown.context == "subjects" and str(shown.where) == "in.xlsx › Subjects"
    assert shown.text.startswith("access can only be set at creation — 4 records, first: D2 (S2): live 'A', "
                                 "source 'B2'; D3 (S3)")


def test_an_empty_cell_reads_empty_never_none(tmp_path: Path) -> None:
    write_workbook(tmp_path / "in.xlsx", {"Schools": [["Code", "Name"], ["SCI", "Science"], ["SCI", None]]})
    write_mapping(tmp_path / "m.yaml", "version: 1\nsource: in.xlsx\nentities:\n  schools:\n    entity: school\n"
                  "    sheet: Schools\n    key: [code]\n    fields:\n      code: Code\n"
                  "      name: {column: Name, empty: clear}\n")
    sources = read_sources([tmp_path / "m.yaml"], load_profile())
    [finding] = sources.blocks[0].findings
    assert finding.code == "duplicate-key" and "'Science' and empty" in finding.message
    assert "None" not in finding.message and finding.key == "SCI"
