"""results.xlsx for a source that is not a file: the records read, one sheet a block, one row a
record under a header of its fields, with the outcome columns beside them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openpyxl import load_workbook

from loader.cli import main

MAPPING = """\
version: 1
sources:
  catalogue:
    json: courses.json
    records: "$.items[*]"
entities:
  subjects:
    entity: subject
    source: catalogue
    key: [code]
    fields:
      code: code
      name: title
      custom_attributes:
        Load: {column: load, type: string}
"""


def test_a_json_sources_records_are_written_with_their_outcomes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loader.yaml").write_text("{}\n", encoding="utf-8")
    (tmp_path / "m.yaml").write_text(MAPPING, encoding="utf-8")
    items = [{"code": "INFO101", "title": "Databases", "load": 5}, {"code": "INFO202", "title": "Networks"}]
    (tmp_path / "courses.json").write_text(json.dumps({"items": items}), encoding="utf-8")
    assert main(["plan", "m.yaml", "--out", "plan.json"]) == 0
    assert main(["apply", "--plan", "plan.json", "--results", "results.xlsx"]) == 0
    assert "not copied" not in capsys.readouterr().err
    sheet = load_workbook(tmp_path / "results.xlsx")["subjects"]
    rows = [list(row) for row in sheet.iter_rows(values_only=True)]
    assert rows[0] == ["code", "name", "custom_attributes.Load", "loader status", "loader id", "loader message",
                       "loader block"]
    assert [row[:4] for row in rows[1:]] == [["INFO101", "Databases", "5", "created"],
                                             ["INFO202", "Networks", None, "created"]]
    assert all(row[4] for row in rows[1:])  # the ids the service gave


def test_every_kind_whose_results_are_its_records_places_them_by_record() -> None:
    """results.xlsx tells such a block from the plan by its records' places: the two must agree."""
    from loader.source.readers import KINDS

    assert {k.name for k in KINDS.values() if k.results == "records"} == \
        {k.name for k in KINDS.values() if k.places == "record"}
