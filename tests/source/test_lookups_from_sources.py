"""A `lookup:` reads any kind of named source: a query, a JSON file or an XML file maps a cell's
text as a two-column table in a workbook does."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from loader.cli import main
from loader.plan.plan_file import read_plan_json

MAPPING = """\
version: 1
sources:
  levels:
{source}
entities:
  units:
    entity: subject
    source: units.csv
    key: [code]
    fields:
      code: Code
      name: Name
      custom_attributes:
        Level: {{column: Level, lookup: {{source: levels, key: "{key}", value: "{value}"}}}}
"""

SOURCES = {
    "sql": ('    sql: "SELECT level_code, level_name FROM levels"\n    url: sqlite:///levels.db', "LEVEL_CODE",
            "level_name"),
    "json": ('    json: levels.json\n    records: "$.levels[*]"', "code", "name.en"),
    "xml": ('    xml: levels.xml\n    records: "//level"', "@code", "name"),
}


def _levels(kind: str, folder: Path) -> None:
    rows = [("UG", "Undergraduate"), ("PG", "Postgraduate")]
    if kind == "sql":
        with closing(sqlite3.connect(folder / "levels.db")) as db, db:
            db.execute("CREATE TABLE levels (level_code TEXT, level_name TEXT)")
            db.executemany("INSERT INTO levels VALUES (?, ?)", rows)
    elif kind == "json":
        items = ", ".join(f'{{"code": "{c}", "name": {{"en": "{n}"}}}}' for c, n in rows)
        (folder / "levels.json").write_text(f'{{"levels": [{items}]}}', encoding="utf-8")
    else:
        items = "".join(f'<level code="{c}"><name>{n}</name></level>' for c, n in rows)
        (folder / "levels.xml").write_text(f"<levels>{items}</levels>", encoding="utf-8")


@pytest.mark.parametrize("kind", sorted(SOURCES))
def test_a_lookup_reads_a_named_source_of_any_kind(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    source, key, value = SOURCES[kind]
    (tmp_path / "m.yaml").write_text(MAPPING.format(source=source, key=key, value=value), encoding="utf-8")
    (tmp_path / "units.csv").write_text("Code,Name,Level\nLKP1001,Lookups One,UG\nLKP5001,Lookups Five,PG\n",
                                        encoding="utf-8")
    _levels(kind, tmp_path)
    assert main(["plan", "m.yaml", "--out", "plan.json"]) == 0, capsys.readouterr()
    capsys.readouterr()  # the first plan's output: the second plan's is read alone below
    created = {r.key: r.payload for r in read_plan_json(tmp_path / "plan.json").records()}
    assert created[("LKP1001",)]["custom_attributes"] == {"Level": "Undergraduate"}
    assert created[("LKP5001",)]["custom_attributes"] == {"Level": "Postgraduate"}

    (tmp_path / "units.csv").write_text("Code,Name,Level\nLKP1001,Lookups One,UX\n", encoding="utf-8")
    assert main(["plan", "m.yaml", "--out", "plan.json"]) == 1
    out = capsys.readouterr().out  # a value the source does not list: an error at the cell
    shown = " ".join(out.split())  # the terminal's line breaks as spaces
    assert "✗ units.csv › C2 (LKP1001): custom_attributes.Level: expected a " in shown
    assert "listed in levels" in shown and "got 'UX'" in shown
