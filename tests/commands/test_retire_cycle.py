"""Arrangements dropped from the source under `on_dropped: {set: {status: INACTIVE}}`, through the
CLI against the sandbox: the ACTIVE one retires to INACTIVE, the DRAFT one is never PATCHed (the
sandbox's request counters show it), and the revert says it cannot move back, sending nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers.api import requests_to
from helpers.apply import live_records, loader_yaml_for
from helpers.mapping import write_workbook
from helpers.review import sheet_rows

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
PATCH = "PATCH /institution/articulation-arrangements/{id}"


def _sheet(path: Path, rows: list[list[str]]) -> None:
    write_workbook(path, {"Arrangements": [["Code", "Title", "Status"], *rows]})


def _statuses(sandbox: Any) -> dict[str, str]:
    return {str(a["code"]): str(a["status"]) for a in live_records(sandbox, "arrangement")}


def _reports_name_what_becomes_of_each(plan: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """Every report of the plan lists the dropped records with key, name, id, last loaded and outcome; the
    review workbook labels the retirement's row."""
    ids = {tuple(d["key"]): d["id"] for d in plan["blocks"][0]["dropped"]}
    retired, left = ids[("A1",)], ids[("A2",)]
    capsys.readouterr()
    assert main(["show", "plan.json", "--report", "plan.md", "--html", "plan.html", "--review", "review.xlsx"]) == 0
    terminal = capsys.readouterr().out
    retiring = "retire: status: ACTIVE → INACTIVE"
    assert re.search(rf"dropped A1 Live one  id {retired}, last loaded \S+  {retiring}", terminal)
    assert re.search(rf"dropped A2 Draft one  id {left}, last loaded \S+  nothing written", terminal)
    markdown = Path("plan.md").read_text(encoding="utf-8")
    assert "| key | name | id | last loaded | outcome |" in markdown
    assert re.search(rf"\| `A1` \| Live one \| `{retired}` \| \S+ \| {retiring} \|", markdown)
    assert re.search(rf"\| `A2` \| Draft one \| `{left}` \| \S+ \| nothing written \|", markdown)
    html = Path("plan.html").read_text(encoding="utf-8")
    assert f"Live one, id {retired}, last loaded" in html and retiring in html
    assert f"Draft one, id {left}, last loaded" in html
    (row,) = [row for row in sheet_rows(Path("review.xlsx")) if "A1" in row.values()]
    assert (row["change"], row["current value"], row["proposed value"]) == (
        "retire Live one: dropped from the source", "ACTIVE", "INACTIVE")


def test_a_dropped_active_arrangement_retires_and_a_draft_one_is_left_unpublished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "RETIRE_SECRET"), encoding="utf-8")
        monkeypatch.setenv("RETIRE_SECRET", sandbox.client_secret)
        monkeypatch.chdir(tmp_path)
        (tmp_path / "arrangements.yaml").write_text(MAPPING, encoding="utf-8")
        kept = [[f"K{n}", f"Kept {n}", "Draft"] for n in range(4)]
        _sheet(tmp_path / "arrangements.xlsx", [["A1", "Live one", "Live"], ["A2", "Draft one", "Draft"], *kept])
        assert main(["apply", "arrangements.yaml", "--env", "local", "--yes"]) == EXIT_OK
        assert _statuses(sandbox)["A1"] == "ACTIVE"

        _sheet(tmp_path / "arrangements.xlsx", kept)  # A1 and A2 dropped from the source
        assert main(["plan", "arrangements.yaml", "--env", "local", "--format", "json", "--out", "plan.json"]) == 0
        plan = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
        (retire,) = [r for b in plan["blocks"] for r in b["records"] if r.get("retiring")]
        assert retire["key"] == ["A1"] and retire["status_path"] == ["INACTIVE"]
        assert any("A2" in f["message"] and "left unpublished" in f["message"]
                   for b in plan["blocks"] for f in b["findings"])
        _reports_name_what_becomes_of_each(plan, capsys)
        sandbox.reset_stats()
        assert main(["apply", "arrangements.yaml", "--env", "local", "--yes"]) == EXIT_OK
        assert requests_to(sandbox.stats(), PATCH) == 1  # A1's one step; A2 never PATCHed
        statuses = _statuses(sandbox)
        assert (statuses["A1"], statuses["A2"]) == ("INACTIVE", "DRAFT")

        assert main(["plan", "arrangements.yaml", "--env", "local", "--format", "json", "--out", "again.json"]) == 0
        again = json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))
        assert not [r for b in again["blocks"] for r in b["records"] if r.get("retiring")]  # retired: nothing left

        assert main(["revert", "--env", "local", "--out", "revert.json"]) == EXIT_OK
        assert "cannot move back from INACTIVE" in (tmp_path / "revert.json").read_text(encoding="utf-8")
        sandbox.reset_stats()
        assert main(["apply", "--plan", "revert.json", "--env", "local", "--yes"]) == EXIT_OK
        assert requests_to(sandbox.stats(), PATCH) == 0
        assert _statuses(sandbox)["A1"] == "INACTIVE"


RELEASING = """version: 1
source: schools.xlsx
entities:
  schools:
    entity: school
    sheet: Schools
    key: [code]
    on_dropped: release
    fields:
      code: Code
      name: Name
"""


def test_a_released_record_is_listed_once_then_forgotten_and_compared_two_way_when_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from helpers.project import write_schools

    from loader.history.store import History

    with serve_in_thread(SandboxOptions()) as sandbox:
        (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "RELEASE_SECRET"), encoding="utf-8")
        monkeypatch.setenv("RELEASE_SECRET", sandbox.client_secret)
        monkeypatch.chdir(tmp_path)
        (tmp_path / "schools.yaml").write_text(RELEASING, encoding="utf-8")
        write_schools(tmp_path / "schools.xlsx", [("SCI", "Science"), ("ENG", "Engineering")])
        assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK
        write_schools(tmp_path / "schools.xlsx", [("SCI", "Science")])
        assert main(["plan", "schools.yaml", "--env", "local", "--format", "json", "--out", "plan.json"]) == 0
        plan = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
        (block,) = plan["blocks"]
        assert [r["key"] for r in block["released"]] == [["ENG"]]
        assert any("released: no longer managed here" in f["message"] for f in block["findings"])
        assert main(["apply", "--plan", "plan.json", "--env", "local", "--yes"]) == EXIT_OK  # the saved plan
        history = History.open(tmp_path / "history" / "local")
        assert history.line("school", ("ENG",)) is None and history.line("school", ("SCI",)) is not None

        assert main(["plan", "schools.yaml", "--env", "local", "--format", "json", "--out", "again.json"]) == 0
        (block,) = json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))["blocks"]
        assert "released" not in block and block["dropped"] == []  # listed once: now not managed here
        assert [n["key"] for n in block["not_in_source_records"]] == [["ENG"]]


LABELLING = RELEASING.replace("on_dropped: release", "on_dropped: {set: {custom_attributes: {Status: Discontinued}}}")


def _labels(sandbox: Any) -> dict[str, dict[str, str]]:
    return {str(s["code"]): dict(s.get("custom_attributes") or {}) for s in live_records(sandbox, "school")}


def test_a_retired_record_back_in_the_source_gets_what_on_dropped_set_given_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from helpers.project import write_schools

    with serve_in_thread(SandboxOptions()) as sandbox:
        (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "LABEL_SECRET"), encoding="utf-8")
        monkeypatch.setenv("LABEL_SECRET", sandbox.client_secret)
        monkeypatch.chdir(tmp_path)
        (tmp_path / "schools.yaml").write_text(LABELLING, encoding="utf-8")
        rows = [("SCI", "Science"), ("ENG", "Engineering"), ("LAW", "Law"), ("ART", "Arts")]
        write_schools(tmp_path / "schools.xlsx", rows)
        assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK
        write_schools(tmp_path / "schools.xlsx", [row for row in rows if row[0] != "ENG"])
        assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK
        assert _labels(sandbox)["ENG"] == {"Status": "Discontinued"}
        write_schools(tmp_path / "schools.xlsx", rows)  # ENG is back
        assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK
        assert _labels(sandbox)["ENG"] == {}  # it had no Status before it was retired
        assert main(["plan", "schools.yaml", "--env", "local", "--format", "json", "--out", "again.json"]) == 0
        again = json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))
        assert all(r["action"] == "unchanged" for b in again["blocks"] for r in b["records"])
