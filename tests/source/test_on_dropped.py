"""`on_dropped:` read from a mapping: keep, the values `set:` sets, and what it cannot set."""

from __future__ import annotations

from pathlib import Path

from helpers.mapping import messages, read, write_mapping, write_workbook

MAPPING = """version: 1
source: arrangements.xlsx
entities:
  arrangements:
    entity: {entity}
    sheet: Arrangements
    key: [code]
    on_dropped: {on_dropped}
    fields:
      code: Code
      name: Title
"""


def _read(tmp_path: Path, on_dropped: str, entity: str = "arrangement") -> tuple[object, list[str]]:
    write_workbook(tmp_path / "arrangements.xlsx", {"Arrangements": [["Code", "Title"], ["A1", "One"]]})
    sources = read([write_mapping(tmp_path / "a.yaml", MAPPING.format(on_dropped=on_dropped, entity=entity))])
    block = sources.blocks[0] if sources.blocks else None
    return (None if block is None else block.on_dropped), messages(sources)


def test_keep_is_no_rule_and_set_names_its_values_with_labels_by_label(tmp_path: Path) -> None:
    assert _read(tmp_path, "keep") == (None, [])
    rule, found = _read(tmp_path, "{set: {status: INACTIVE}}")
    assert not found and rule.values == (("status", "INACTIVE"),)  # type: ignore[attr-defined]
    rule, found = _read(tmp_path, "{set: {custom_attributes: {Status: Discontinued}}}", entity="subject")
    assert not found and rule.values == (("custom_attributes.Status", "Discontinued"),)  # type: ignore[attr-defined]


def test_a_key_field_a_field_or_a_state_the_entity_lacks_is_refused_at_its_place(tmp_path: Path) -> None:
    _, found = _read(tmp_path, "{set: {custom_attributes: {Status: Discontinued}}}")
    assert any("cannot set 'custom_attributes'" in m for m in found)  # arrangements have no labels
    _, found = _read(tmp_path, "{set: {code: X}}")
    assert any("a.yaml:8" in m and "cannot set 'code'" in m for m in found)
    _, found = _read(tmp_path, "{set: {status: RETIRED}}")
    assert any("not a state of arrangement" in m for m in found)
