"""A catalogue renumbered through a crosswalk file (`renamed: {source:, from:, to:}`), through the
CLI against the sandbox: the subjects sheet has only new codes, the crosswalk pairs them with the
old ones; the plan renumbers the same live ids, and the plan after the apply has nothing to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.apply import live_records, loader_yaml_for
from helpers.mapping import write_workbook

from loader.cli import main
from loader.errors import EXIT_OK
from loader.sandbox.server import SandboxOptions, serve_in_thread

SUBJECTS = """version: 1
source: subjects.xlsx
entities:
  subjects:
    entity: subject
    sheet: Subjects
    key: [code]
    renamed: {source: renumbering-2027.csv, from: Old Code, to: New Code}
    fields:
      code: Code
      name: Name
"""


def _sheet(path: Path, rows: list[list[Any]]) -> None:
    write_workbook(path, {"Subjects": [["Code", "Name"], *rows]})


def _live_codes(sandbox: Any) -> dict[str, str]:
    return {str(s["id"]): str(s["code"]) for s in live_records(sandbox, "subject")}


def _plan(name: str) -> list[dict[str, Any]]:
    assert main(["plan", "subjects.yaml", "--env", "local", "--format", "json", "--out", name]) == EXIT_OK
    plan = json.loads(Path(name).read_text(encoding="utf-8"))
    return [r for b in plan["blocks"] for r in b["records"]]


def test_a_crosswalk_renumbers_the_live_records_it_pairs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "CROSSWALK_SECRET"), encoding="utf-8")
        monkeypatch.setenv("CROSSWALK_SECRET", sandbox.client_secret)
        monkeypatch.chdir(tmp_path)
        (tmp_path / "subjects.yaml").write_text(SUBJECTS, encoding="utf-8")
        (tmp_path / "renumbering-2027.csv").write_text("Old Code,New Code\n", encoding="utf-8")
        _sheet(tmp_path / "subjects.xlsx", [["MATH201", "Calculus"], ["PHYS100", "Physics"], ["CHEM100", "Chemistry"]])
        assert main(["apply", "subjects.yaml", "--env", "local", "--yes"]) == EXIT_OK
        first = _live_codes(sandbox)

        (tmp_path / "renumbering-2027.csv").write_text(
            "Old Code,New Code\nMATH201,MATH2001\nCHEM100,CHEM1001\nHIST100,HIST1001\n", encoding="utf-8")
        _sheet(tmp_path / "subjects.xlsx",
               [["MATH2001", "Calculus"], ["PHYS100", "Physics"], ["CHEM1001", "Chemistry"]])
        _sheet(tmp_path / "subjects.xlsx",
               [["PHYS100", "Physics, renamed"], ["MATH2001", "Calculus"], ["CHEM1001", "Chemistry"]])
        records = _plan("plan.json")
        assert sorted((r["key"][0], r.get("renamed_from")) for r in records if r["action"] != "unchanged") == [
            ("CHEM1001", ["CHEM100"]), ("MATH2001", ["MATH201"]), ("PHYS100", None)]
        capsys.readouterr()
        assert main(["plan", "subjects.yaml", "--env", "local", "--report", "plan.md"]) == EXIT_OK
        shown = capsys.readouterr().out
        assert "Plan: 2 to renumber · 1 to update." in shown
        assert shown.index("renumber MATH201 → MATH2001") < shown.index("update PHYS100")  # renumbers listed first
        report = (tmp_path / "plan.md").read_text(encoding="utf-8")
        assert "**2 to renumber, 0 to create, 1 to update**" in report
        updates = report[report.index("#### Updates"):]
        assert updates.index("`MATH2001`") < updates.index("`PHYS100`")  # renumbers listed first
        assert updates.index("`CHEM1001`") < updates.index("`PHYS100`")
        assert main(["apply", "subjects.yaml", "--env", "local", "--yes"]) == EXIT_OK
        now = _live_codes(sandbox)
        assert sorted(now) == sorted(first)  # the same ids: no create
        assert sorted(now.values()) == ["CHEM1001", "MATH2001", "PHYS100"]
        assert all(r["action"] == "unchanged" for r in _plan("again.json"))


SUCCESSORS = SUBJECTS.replace("to: New Code}", "to: New Code, as: successor}").replace(
    "    fields:\n", "    on_dropped: {set: {custom_attributes: {Status: Discontinued}}}\n    fields:\n")


def test_as_successor_creates_the_new_code_linked_and_retires_the_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "SUCCESSOR_SECRET"), encoding="utf-8")
        monkeypatch.setenv("SUCCESSOR_SECRET", sandbox.client_secret)
        monkeypatch.chdir(tmp_path)
        (tmp_path / "subjects.yaml").write_text(SUCCESSORS, encoding="utf-8")
        (tmp_path / "renumbering-2027.csv").write_text("Old Code,New Code\n", encoding="utf-8")
        _sheet(tmp_path / "subjects.xlsx", [["MATH201", "Calculus"], ["PHYS100", "Physics"]])
        assert main(["apply", "subjects.yaml", "--env", "local", "--yes"]) == EXIT_OK
        first = _live_codes(sandbox)

        (tmp_path / "renumbering-2027.csv").write_text("Old Code,New Code\nMATH201,MATH2001\n", encoding="utf-8")
        _sheet(tmp_path / "subjects.xlsx", [["MATH2001", "Calculus"], ["PHYS100", "Physics"]])
        records = {r["key"][0]: r for r in _plan("plan.json")}
        assert records["MATH2001"]["action"] == "create" and "renamed_from" not in records["MATH2001"]
        assert not [f for r in records.values() for f in r["findings"] if f["severity"] == "error"]
        assert main(["apply", "subjects.yaml", "--env", "local", "--yes"]) == EXIT_OK
        now = _live_labels(sandbox)
        assert sorted(now.values()) == [
            ("MATH2001", {"Replaces": "MATH201"}), ("MATH201", {"Status": "Discontinued"}), ("PHYS100", {})]
        assert set(first) < set(now)  # the old record kept its id; the successor is new
        assert all(r["action"] == "unchanged" for r in _plan("again.json"))  # both live: linked, not an error


def _live_labels(sandbox: Any) -> dict[str, tuple[str, dict[str, Any]]]:
    return {str(s["id"]): (str(s["code"]), dict(s.get("custom_attributes") or {}))
            for s in live_records(sandbox, "subject")}
