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


def test_an_entity_whose_key_the_service_cannot_change_is_refused(tmp_path: Path) -> None:
    write_workbook(tmp_path / "units.xlsx", {"Units": [["Code", "Previous Code", "Name"]]})
    found = messages(read([_mapping(tmp_path, entity="arrangement")]))
    assert any("renamable" in m and "confirm with the service's operator" in m for m in found)


def test_a_key_holding_a_reference_is_a_mapping_error(tmp_path: Path) -> None:
    write_workbook(tmp_path / "units.xlsx", {"Units": [["Code", "Previous Code", "Name", "Program"]]})
    mapping = _mapping(tmp_path, key="code, parent", extra="      parent: {ref: program, column: Program}\n")
    assert any("cannot move a key holding a reference" in m for m in messages(read([mapping])))
