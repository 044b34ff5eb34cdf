"""`renamed:` read from a mapping and its source: the previous key of each row, and the mappings
it is refused for."""

from __future__ import annotations

from pathlib import Path

from helpers.mapping import messages, read, write_mapping, write_workbook

MAPPING = """version: 1
source: units.xlsx
entities:
  units:
    entity: {entity}
    sheet: Units
    key: [{key}]
    renamed: {{column: Previous Code}}
    fields:
      code: Code
      name: Name
{extra}"""


def _mapping(tmp_path: Path, entity: str = "subject", key: str = "code", extra: str = "") -> Path:
    return write_mapping(tmp_path / "units.yaml", MAPPING.format(entity=entity, key=key, extra=extra))


def test_each_row_names_its_previous_key_and_an_empty_or_same_cell_none(tmp_path: Path) -> None:
    write_workbook(tmp_path / "units.xlsx", {"Units": [
        ["Code", "Previous Code", "Name"], ["MATH2001", "MATH201", "Calculus"], ["PHYS100", None, "Physics"],
        ["CHEM100", "CHEM100", "Chemistry"], ["BIO2001", 201, "Biology"]]})
    sources = read([_mapping(tmp_path)])
    (block,) = sources.blocks
    assert [(r.new, r.old, r.cell.cell) for r in block.renames] == [
        (("MATH2001",), ("MATH201",), "B2"), (("BIO2001",), ("201",), "B5")]


def test_a_missing_previous_key_column_is_a_header_error(tmp_path: Path) -> None:
    write_workbook(tmp_path / "units.xlsx", {"Units": [["Code", "Name"], ["MATH2001", "Calculus"]]})
    assert any("Previous Code" in m for m in messages(read([_mapping(tmp_path)])))


def test_an_update_of_a_key_the_service_cannot_change_is_refused(tmp_path: Path) -> None:
    write_workbook(tmp_path / "units.xlsx", {"Units": [["Code", "Previous Code", "Name"]]})
    mapping = _mapping(tmp_path, entity="arrangement")
    mapping.write_text(mapping.read_text(encoding="utf-8").replace("Previous Code}", "Previous Code, as: update}"),
                       encoding="utf-8")
    found = messages(read([mapping]))
    assert any("renamable" in m and "confirm with the service's operator" in m for m in found)


def test_a_successor_needs_a_label_to_link_the_records(tmp_path: Path) -> None:
    write_workbook(tmp_path / "units.xlsx", {"Units": [["Code", "Previous Code", "Name"]]})
    found = messages(read([_mapping(tmp_path, entity="arrangement")]))  # not renamable: successor by default
    assert any("as: successor" in m and "custom_attributes" in m for m in found)


def test_a_successor_names_the_record_it_replaces_in_its_replaces_label(tmp_path: Path) -> None:
    write_workbook(tmp_path / "units.xlsx", {"Units": [
        ["Code", "Previous Code", "Name"], ["MATH2001", "MATH201", "Calculus"], ["PHYS100", None, "Physics"]]})
    mapping = _mapping(tmp_path)
    mapping.write_text(mapping.read_text(encoding="utf-8").replace("Previous Code}", "Previous Code, as: successor}"),
                       encoding="utf-8")
    (block,) = read([mapping]).blocks
    assert block.renamed_as == "successor"
    assert [r.fields.get("custom_attributes") for r in block.records] == [{"Replaces": "MATH201"}, None]
    assert block.records[0].place("custom_attributes.Replaces").cell == "B2"


def test_a_key_holding_a_reference_is_a_mapping_error(tmp_path: Path) -> None:
    write_workbook(tmp_path / "units.xlsx", {"Units": [["Code", "Previous Code", "Name", "Program"]]})
    mapping = _mapping(tmp_path, key="code, parent", extra="      parent: {ref: program, column: Program}\n")
    assert any("cannot move a key holding a reference" in m for m in messages(read([mapping])))


CROSSWALK_MAPPING = """version: 1
source: units.xlsx
entities:
  units:
    entity: subject
    sheet: Units
    key: [code]
    renamed: {{source: {crosswalk}, from: Old Code, to: New Code}}
    fields:
      code: Code
      name: Name
"""


def _crosswalk_mapping(tmp_path: Path, crosswalk: str = "renumbering-2027.csv") -> Path:
    write_workbook(tmp_path / "units.xlsx", {"Units": [
        ["Code", "Name"], ["MATH2001", "Calculus"], ["PHYS100", "Physics"], ["BIO2001", "Biology"]]})
    return write_mapping(tmp_path / "units.yaml", CROSSWALK_MAPPING.format(crosswalk=crosswalk))


def test_a_crosswalk_names_the_previous_key_of_each_record_it_lists(tmp_path: Path) -> None:
    (tmp_path / "renumbering-2027.csv").write_text(
        "Old Code,New Code\nMATH201,MATH2001\nCHEM100,CHEM1001\nBIO201,BIO2001\nPHYS100,PHYS100\n", encoding="utf-8")
    sources = read([_crosswalk_mapping(tmp_path)])
    (block,) = sources.blocks
    assert [(r.new, r.old, Path(r.cell.file).name, r.cell.row) for r in block.renames] == [
        (("MATH2001",), ("MATH201",), "renumbering-2027.csv", 2),
        (("BIO2001",), ("BIO201",), "renumbering-2027.csv", 4)]
    assert any(name.endswith("renumbering-2027.csv") for name in sources.fingerprints)


def test_a_crosswalk_listing_two_codes_for_one_new_code_gives_both_to_the_plan(tmp_path: Path) -> None:
    (tmp_path / "renumbering-2027.csv").write_text(
        "Old Code,New Code\nMATH201,MATH2001\nMATH202,MATH2001\n", encoding="utf-8")
    (block,) = read([_crosswalk_mapping(tmp_path)]).blocks
    assert [r.old for r in block.renames] == [("MATH201",), ("MATH202",)]


def test_a_crosswalk_without_its_columns_is_an_error_at_renamed(tmp_path: Path) -> None:
    (tmp_path / "renumbering-2027.csv").write_text("Old,New\nMATH201,MATH2001\n", encoding="utf-8")
    sources = read([_crosswalk_mapping(tmp_path)])
    assert sources.blocks == ()
    assert any("'Old Code'" in m and "'New Code'" in m and "`from:`" in m for m in messages(sources))


def test_a_missing_crosswalk_file_is_an_error(tmp_path: Path) -> None:
    sources = read([_crosswalk_mapping(tmp_path, "missing.csv")])
    assert sources.blocks == () and any("missing.csv" in m for m in messages(sources))


def test_renamed_with_both_a_column_and_a_crosswalk_is_refused(tmp_path: Path) -> None:
    (tmp_path / "renumbering-2027.csv").write_text("Old Code,New Code\n", encoding="utf-8")
    mapping = _crosswalk_mapping(tmp_path)
    mapping.write_text(mapping.read_text(encoding="utf-8").replace("{source:", "{column: Previous, source:"),
                       encoding="utf-8")
    sources = read([mapping])
    assert sources.blocks == () and any("renamed" in m for m in messages(sources))
