"""The Python API (`loader.library`): plan, show and apply from mapping files with a source given as
an in-memory table, against the embedded sandbox; the command line never imports the table libraries."""

from __future__ import annotations

import asyncio
import gc
import json
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest

from loader import library
from loader.apply.results import Outcome
from loader.errors import LoaderError
from loader.plan.model import Action

MAPPING = """\
version: 1
sources:
  units: {table: []}
entities:
  subjects:
    entity: subject
    source: units
    key: [code]
    fields:
      code: Code
      name: Name
      custom_attributes:
        Credit: {column: Credit}
        Faculty: {column: Faculty}
        Starts: {column: Starts, type: date}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loader.yaml").write_text("{}\n", encoding="utf-8")  # a project of its own: the built-in sandbox
    (tmp_path / "units.yaml").write_text(MAPPING, encoding="utf-8")
    return tmp_path


def _units() -> pd.DataFrame:
    return pd.DataFrame({
        "Code": ["U1", "U2", "U3"],
        "Name": ["One", "Two", "Three"],
        "Credit": pd.array([10, None, 12], dtype="Int64"),
        "Faculty": pd.Categorical(["Arts", "Law", None]),
        "Starts": pd.Series([datetime(2027, 2, 1), None, datetime(2027, 3, 1, 0, 0)], dtype="datetime64[ns]"),
        "Unmapped": [np.nan, 1.5, np.nan],
    })


def test_a_dataframe_is_planned_shown_applied_by_path_and_then_nothing_is_left_to_do(project: Path) -> None:
    plan = library.plan(["units.yaml"], tables={"units": _units()})
    created = {r.key: r.payload for r in plan.records() if r.action == Action.CREATE}
    assert created == {
        ("U1",): {"code": "U1", "name": "One",
                  "custom_attributes": {"Credit": "10", "Faculty": "Arts", "Starts": "2027-02-01"}},
        ("U2",): {"code": "U2", "name": "Two", "custom_attributes": {"Faculty": "Law"}},
        ("U3",): {"code": "U3", "name": "Three", "custom_attributes": {"Credit": "12", "Starts": "2027-03-01"}},
    }
    shown = library.show(plan, out="plan.json", report="plan.md")
    assert "3 to create" in shown and (project / "plan.md").is_file()
    assert "table:units" in json.loads((project / "plan.json").read_text(encoding="utf-8"))["fingerprints"]
    results = library.apply("plan.json")
    assert results.ok and len(results.records) == 3
    again = library.plan(["units.yaml"], tables={"units": pl.from_pandas(_units())})
    assert not again.has_changes and not again.has_errors
    assert {r.outcome for r in library.apply(again).records} == {Outcome.UNCHANGED}


def test_a_table_for_no_source_and_a_table_with_the_wrong_columns_say_what_is_wrong(project: Path) -> None:
    with pytest.raises(LoaderError, match=r"no block of the mappings reads.*did you mean 'units'"):
        library.plan(["units.yaml"], tables={"unit": _units()})
    plan = library.plan(["units.yaml"], tables={"units": [{"Code": "U1", "Title": "One"}]})
    assert plan.has_errors
    assert any("Name" in finding.message for finding in plan.findings if finding.severity == "error")


FEEDS = """\
version: 1
sources:
  handbook:
    sql: "SELECT unit_code, title FROM units"
    url: sqlite:///handbook.db
  catalogue:
    json: courses.json
    records: "$.items[*]"
  feed:
    xml: catalogue.xml
    records: "//course"
entities:
  units:
    entity: subject
    source: handbook
    key: [code]
    fields: {code: UNIT_CODE, name: title}
  catalogue:
    entity: subject
    source: catalogue
    key: [code]
    fields: {code: code, name: title}
  feed:
    entity: course
    source: feed
    key: [code]
    fields: {code: "@id", name: title}
"""


def test_the_library_plans_a_query_a_json_file_and_an_xml_file_as_the_command_line_does(project: Path) -> None:
    with closing(sqlite3.connect(project / "handbook.db")) as db, db:
        db.execute("CREATE TABLE units (unit_code TEXT, title TEXT)")
        db.execute("INSERT INTO units VALUES ('MATH1001', 'Calculus')")
    (project / "courses.json").write_text('{"items": [{"code": "INFO101", "title": "Databases"}]}', encoding="utf-8")
    (project / "catalogue.xml").write_text('<catalog><course id="PG-1"><title>MSc Data</title></course></catalog>',
                                           encoding="utf-8")
    (project / "feeds.yaml").write_text(FEEDS, encoding="utf-8")
    plan = library.plan(["feeds.yaml"])
    assert sorted((r.block, r.key, r.payload["name"]) for r in plan.records()) == [
        ("catalogue", ("INFO101",), "Databases"), ("feed", ("PG-1",), "MSc Data"), ("units", ("MATH1001",), "Calculus")]
    assert str(plan.blocks[0].records[0].source) == "handbook (query) › MATH1001"
    assert library.apply(plan).ok
    assert not library.plan(["feeds.yaml"]).has_changes


def test_planning_inside_a_running_event_loop_changes_no_interpreter_setting(project: Path) -> None:
    """A notebook runs an event loop already: the plan is made in a thread of its own. The garbage
    collector and the switch interval stay as they were while it runs (a watcher samples them)."""
    before = (gc.isenabled(), gc.get_threshold(), sys.getswitchinterval())
    seen: set[tuple[object, ...]] = set()
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.002):
            seen.add((gc.isenabled(), gc.get_threshold(), sys.getswitchinterval()))

    async def in_a_notebook() -> int:
        return len(library.plan(["units.yaml"], tables={"units": _units()}).records())

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        assert asyncio.run(in_a_notebook()) == 3
    finally:
        stop.set()
        watcher.join()
    assert seen <= {before}


def test_the_command_line_never_imports_the_table_libraries(project: Path) -> None:
    rows = "[{Code: U1, Name: One, Credit: 10, Faculty: Arts, Starts: 2027-02-01}]"
    (project / "units.yaml").write_text(MAPPING.replace("[]", rows), encoding="utf-8")
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "loader", "plan", "units.yaml"],
                         capture_output=True, text=True, timeout=240, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in run.stderr.splitlines()
                if line.startswith("import time:")}
    assert "loader" in imported
    assert not imported & {"pandas", "polars", "pyarrow", "numpy"}
