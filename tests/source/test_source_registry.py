"""The source registry: a new kind of source is one module and one line in `KINDS`, and the loader
plans from it; the in-memory table kind; fingerprints of the values a source gave."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from loader.cli import main
from loader.plan.model import Action
from loader.plan.plan_file import read_plan_json
from loader.profile import load_profile
from loader.source.mapping_file import read_mapping
from loader.source.named_sources import given_sources
from loader.source.readers import KINDS, SheetData, SheetRow, Source, SourceKind, SourceShape, kind_for, reads_files
from loader.source.readers.kinds import Wanted, no_files, values_digest
from loader.source.readers.table import table
from loader.source.sources import read_sources

# --- a throwaway kind: `counted: N` gives N subjects, U1 .. UN -------------------------------------


def _counted_read(source: Source, display: str, sheet: str | None, wanted: Wanted) -> SheetData:
    rows = [SheetRow(n + 1, (f"U{n}", f"Unit {n}")) for n in range(1, int(source.location) + 1)]
    return SheetData(display, None, (SheetRow(1, ("Code", "Name")), *rows))


def _counted(name: str, entry: dict[str, Any], folder: Path) -> Source:
    return Source("counted", str(entry["counted"]), name=name)


COUNTED = SourceKind("counted", _counted_read, describe=lambda s: f"{s.name} (counted)", files=no_files,
                     in_child=False, fingerprint=values_digest, places="record", results="records",
                     from_mapping=_counted)

SUBJECTS = """\
version: 1
sources:
  units: {{{source}}}
entities:
  subjects:
    entity: subject
    source: units
    key: [code]
    fields:
      code: Code
      name: Name
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_kind_registered_in_one_line_is_planned_from_against_the_sandbox(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(KINDS, COUNTED.name, COUNTED)  # the one registry line
    (project / "m.yaml").write_text(SUBJECTS.format(source="counted: 3"), encoding="utf-8")
    assert main(["plan", "m.yaml", "--out", "plan.json"]) == 0, capsys.readouterr()
    plan = read_plan_json(project / "plan.json")
    created = {r.key: r for r in plan.records() if r.action == Action.CREATE}
    assert sorted(created) == [("U1",), ("U2",), ("U3",)]
    assert created[("U2",)].payload["name"] == "Unit 2"
    assert plan.blocks[0].source_file == "units (counted)"
    assert set(plan.fingerprints) == {"m.yaml", "counted:units"}
    assert not reads_files("counted:units") and reads_files("m.yaml")


def test_a_plan_from_values_is_applied_without_reading_them_again(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "m.yaml").write_text(SUBJECTS.format(source="table: [{Code: T1, Name: One}, {Code: T2, Name: Two}]"),
                                    encoding="utf-8")
    assert main(["plan", "m.yaml", "--out", "plan.json"]) == 0, capsys.readouterr()
    assert main(["apply", "--plan", "plan.json", "--yes"]) == 0, capsys.readouterr()
    assert main(["plan", "m.yaml", "--detailed-exitcode"]) == 0  # nothing left to do
    assert "table:units" in json.loads((project / "plan.json").read_text(encoding="utf-8"))["fingerprints"]


def _read(project: Path, source: str, **given: Source) -> Any:
    (project / "m.yaml").write_text(SUBJECTS.format(source=source), encoding="utf-8")
    profile = load_profile()
    return read_sources([given_sources(read_mapping(project / "m.yaml", profile), given)], profile)


def test_an_in_memory_table_is_read_as_a_sheet_with_its_shape(project: Path) -> None:
    rows = [{"Code": "A1", "Name": "Alpha", "Note": "x"}, {"Code": "A2", "Name": "Beta"}]
    read = _read(project, "table: []", units=table("units", rows))
    block = read.blocks[0]
    assert [(r.key, r.fields["name"]) for r in block.records] == [(("A1",), "Alpha"), (("A2",), "Beta")]
    assert block.source_file == "units (table)"
    assert block.shape == SourceShape(("Code", "Name", "Note"), 2)


def test_the_fingerprint_of_values_ignores_row_order_and_columns_not_mapped(project: Path) -> None:
    def fingerprint(rows: list[dict[str, Any]]) -> str:
        return str(_read(project, "table: []", units=table("units", rows)).fingerprints["table:units"])

    rows = [{"Code": "A1", "Name": "Alpha", "Seen": "monday"}, {"Code": "A2", "Name": "Beta", "Seen": "monday"}]
    first = fingerprint(rows)
    assert fingerprint(rows[::-1]) == first
    assert fingerprint([{**r, "Seen": "tuesday"} for r in rows]) == first
    assert fingerprint([rows[0], {**rows[1], "Name": "Gamma"}]) != first


def test_two_mapping_files_each_read_their_own_table_of_one_name(project: Path) -> None:
    profile = load_profile()
    (project / "a.yaml").write_text(SUBJECTS.format(source="table: [{Code: A1, Name: Alpha}]"), encoding="utf-8")
    (project / "b.yaml").write_text(SUBJECTS.format(source="table: [{Code: B1, Name: Beta}]").replace(
        "subjects:", "others:"), encoding="utf-8")
    read = read_sources([project / "a.yaml", project / "b.yaml"], profile)
    assert [[r.key for r in b.records] for b in read.blocks] == [[("A1",)], [("B1",)]]
    alone = read_sources([project / "a.yaml"], profile).fingerprints["table:units"]
    assert read.fingerprints["table:units"] not in (alone, read_sources([project / "b.yaml"], profile)
                                                     .fingerprints["table:units"])


def test_a_table_cell_that_is_not_one_value_is_an_error_at_its_record(project: Path) -> None:
    read = _read(project, "table: [{Code: A1, Name: [a, b]}]")
    (finding,) = [f for f in read.findings if f.severity == "error"]
    assert str(finding.where) == "units (table) › record 1 › Name"
    assert "column 'Name' holds a list, not one cell's value" in finding.message


def test_a_source_naming_no_kind_is_refused_with_the_kinds_there_are(project: Path) -> None:
    read = _read(project, "tabel: []")
    (finding,) = read.findings
    assert finding.code == "source-kind"
    assert ("source 'units' names no kind of source: give one of json, sql, table, xml (did you mean 'table'?)"
            in finding.message)


def test_a_source_option_its_kind_does_not_take_is_refused_at_its_place(project: Path) -> None:
    read = _read(project, "table: [], delimiter: ';'")
    (finding,) = read.findings
    assert finding.code == "source-option" and str(finding.where) == "m.yaml:3:22"
    assert finding.message == "source 'units': a table source takes no 'delimiter'"


def test_validate_leaves_a_source_that_needs_a_network_unread_unless_asked(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(KINDS, "counted", replace(COUNTED, offline=False))
    (project / "m.yaml").write_text(SUBJECTS.format(source="counted: 2"), encoding="utf-8")
    assert main(["validate", "m.yaml"]) == 0
    out = capsys.readouterr().out
    assert ("1 block reads a source that needs a network or credentials (units (counted)): read by "
            "`loader plan`, or here with `--read-sources`") in out
    assert "records built" not in out
    assert main(["validate", "m.yaml", "--read-sources"]) == 0
    assert "from units (counted): 2 rows read, 2 records built" in capsys.readouterr().out


def test_every_kind_answers_the_registry_interface() -> None:
    for name, kind in KINDS.items():
        assert kind.name == name
        assert bool(kind.suffixes) != (kind.from_mapping is not None)  # a file, or named in `sources:`
    source = table("units", [{"Code": "A1"}])
    assert kind_for(source).offline and not kind_for(source).in_child and kind_for(source).size(source) == 0
