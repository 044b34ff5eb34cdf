"""Records of a source that is not a sheet are placed by their key and column, never by a row
number; a personal key is never shown in a place; the place survives plan.json and `--format json`."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from loader.files.package_data import schema
from loader.places import CellRef, place_from_dict, place_to_dict
from loader.profile import load_profile
from loader.report.machine import place_of
from loader.source.sources import read_sources

MAPPING = """\
version: 1
sources:
  units:
    table:
      - {{Code: A1, Name: Alf}}
      - {{Code: B2, Name: Bertrand}}
entities:
  subjects:
    entity: subject
    source: units
    key: [code]
    fields:
      code: {{column: Code{pii}}}
      name: {{column: Name, max_length: 4}}
"""


def _errors(tmp_path: Path, pii: str = "") -> list[str]:
    (tmp_path / "m.yaml").write_text(MAPPING.format(pii=pii), encoding="utf-8")
    read = read_sources([tmp_path / "m.yaml"], load_profile())
    return [str(f.where) for block in read.blocks for f in block.findings if f.severity == "error"]


def test_a_bad_value_of_a_table_is_placed_by_its_records_key_and_column(tmp_path: Path) -> None:
    assert _errors(tmp_path) == ["units (table) › B2 › Name"]


def test_a_personal_key_is_never_shown_in_a_place(tmp_path: Path) -> None:
    assert _errors(tmp_path, ", pii: true") == ["units (table) › record 2 › Name"]


@pytest.mark.parametrize("place", [CellRef("handbook (query)", None, "credit_points", 3, record="MATH1001"),
                                   CellRef("feed (xml)", None, None, 4, "n=2", record="record 3")])
def test_a_record_place_survives_plan_json_and_the_machine_output(place: CellRef) -> None:
    assert place_from_dict(place_to_dict(place)) == place
    shown = place_of(place)
    assert shown is not None and shown["kind"] == "record" and shown["record"] == place.record
    record_kind = next(p for p in schema("output.schema.json")["$defs"]["place"]["oneOf"]
                       if p.get("properties", {}).get("kind", {}).get("const") == "record")
    assert set(shown) == set(record_kind["properties"])


def test_a_records_cells_keep_its_name_when_pickled_for_the_reading_child(tmp_path: Path) -> None:
    """A reading child sends records in chunks: each carries its own record's name, not the
    block's table of them (which every chunk would carry again)."""
    (tmp_path / "m.yaml").write_text(MAPPING.format(pii=""), encoding="utf-8")
    (block,) = read_sources([tmp_path / "m.yaml"], load_profile()).blocks
    record = block.records[0]
    sent = pickle.loads(pickle.dumps(record.cells))
    assert str(sent["code"]) == str(record.cells["code"]) == "units (table) › A1 › Code"
    assert len(pickle.dumps(record.cells)) < 400
