"""Dropped records in every report: key, name, id, when last loaded, and what the plan does with each
(retired by `on_dropped: {set: …}`, released, or nothing written), through the CLI against the sandbox."""

from __future__ import annotations

import json
import re
from pathlib import Path

import openpyxl
import pytest
from helpers.apply import loader_yaml_for

from loader.cli import main
from loader.errors import EXIT_OK
from loader.sandbox.server import SandboxOptions, serve_in_thread

MAPPING = """version: 1
source: arrangements.xlsx
entities:
  arrangements:
    entity: arrangement
    sheet: Arrangements
    key: [code]
    on_dropped: {set: {status: INACTIVE}}
    fields:
      code: Code
      name: Title
      status: {column: Status, map: {Live: ACTIVE, Draft: DRAFT}}
"""


def _sheet(path: Path, rows: list[list[str]]) -> None:
    book = openpyxl.Workbook()
    book.active.title = "Arrangements"
    book.active.append(["Code", "Title", "Status"])
    for row in rows:
        book.active.append(row)
    book.save(path)


def test_every_report_lists_dropped_records_with_their_names_and_what_becomes_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "DROPPED_SECRET"), encoding="utf-8")
        monkeypatch.setenv("DROPPED_SECRET", sandbox.client_secret)
        monkeypatch.chdir(tmp_path)
        (tmp_path / "arrangements.yaml").write_text(MAPPING, encoding="utf-8")
        kept = [[f"K{n}", f"Kept {n}", "Draft"] for n in range(4)]
        _sheet(tmp_path / "arrangements.xlsx", [["A1", "Live one", "Live"], ["A2", "Draft one", "Draft"], *kept])
        assert main(["apply", "arrangements.yaml", "--env", "local", "--yes"]) == EXIT_OK
        _sheet(tmp_path / "arrangements.xlsx", kept)
        capsys.readouterr()
        assert main(["plan", "arrangements.yaml", "--env", "local", "--report", "plan.md", "--html", "plan.html",
                     "--out", "plan.json", "--review", "review.xlsx"]) == 0
        terminal = capsys.readouterr().out
    ids = {tuple(d["key"]): d["id"] for d in json.loads((tmp_path / "plan.json").read_text())["blocks"][0]["dropped"]}
    retired, left = ids[("A1",)], ids[("A2",)]
    assert re.search(rf"dropped A1 Live one  id {retired}, last loaded \S+  retire: status: ACTIVE → INACTIVE",
                     terminal)
    assert re.search(rf"dropped A2 Draft one  id {left}, last loaded \S+  nothing written", terminal)
    markdown = (tmp_path / "plan.md").read_text(encoding="utf-8")
    assert "| key | name | id | last loaded | outcome |" in markdown
    assert re.search(rf"\| `A1` \| Live one \| `{retired}` \| \S+ \| retire: status: ACTIVE → INACTIVE \|", markdown)
    assert re.search(rf"\| `A2` \| Draft one \| `{left}` \| \S+ \| nothing written", markdown)
    html = (tmp_path / "plan.html").read_text(encoding="utf-8")
    assert f"Live one, id {retired}, last loaded" in html and "retire: status: ACTIVE → INACTIVE" in html
    assert f"Draft one, id {left}, last loaded" in html
    sheet = openpyxl.load_workbook(tmp_path / "review.xlsx")["Review"]
    values = list(sheet.iter_rows(values_only=True))
    rows = [dict(zip(values[0], row, strict=True)) for row in values[1:]]
    (retire,) = [r for r in rows if r["record"] == "A1"]
    assert (retire["change"], retire["current value"], retire["proposed value"]) == (
        "retire Live one: dropped from the source", "ACTIVE", "INACTIVE")
