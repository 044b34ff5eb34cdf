"""A reviewer's decision follows a renumbered record, through the CLI against the sandbox: a skip
decided on a field of U002 holds for the record once renumbered U1002 (matched under its former key,
and said so), is no stale decision, and holds under U002 again after the revert."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from helpers.apply import loader_yaml_for
from helpers.review import decide_row

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
    renamed: {column: Previous Code}
    fields:
      code: Code
      name: Name
"""


def _sheet(path: Path, rows: list[list[Any]]) -> None:
    book = openpyxl.Workbook()
    book.active.title = "Subjects"
    book.active.append(["Code", "Previous Code", "Name"])
    for row in rows:
        book.active.append(row)
    book.save(path)


def _plan() -> dict[str, Any]:
    assert main(["plan", "subjects.yaml", "--env", "local", "--format", "json", "--out", "plan.json"]) == EXIT_OK
    return dict(json.loads(Path("plan.json").read_text(encoding="utf-8")))


def _record(plan: dict[str, Any], code: str) -> dict[str, Any]:
    (record,) = [r for b in plan["blocks"] for r in b["records"] if r["key"] == [code]]
    return dict(record)


def _messages(plan: dict[str, Any], code: str) -> list[str]:
    return [str(f["message"]) for f in _record(plan, code)["findings"] if f["code"] == "skipped-by-decision"]


def _stale(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in plan["findings"] if f["code"] == "stale-decision"]


def test_a_skip_decided_under_the_old_code_follows_the_renumber_and_its_revert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "RENUMBER_SECRET"), encoding="utf-8")
        monkeypatch.setenv("RENUMBER_SECRET", sandbox.client_secret)
        monkeypatch.chdir(tmp_path)
        (tmp_path / "subjects.yaml").write_text(SUBJECTS, encoding="utf-8")
        _sheet(tmp_path / "subjects.xlsx", [["U001", None, "Unit 1"], ["U002", None, "Unit 2"]])
        assert main(["apply", "subjects.yaml", "--env", "local", "--yes"]) == EXIT_OK

        # a name change of U002 refused before the renumber
        _sheet(tmp_path / "subjects.xlsx", [["U001", None, "Unit 1"], ["U002", None, "Unit Two"]])
        assert main(["plan", "subjects.yaml", "--env", "local", "--review", "review.xlsx"]) == EXIT_OK
        decide_row(tmp_path / "review.xlsx", "U002", "name", "skip", "not this term")
        assert main(["decide", "review.xlsx", "--by", "Ana Reviewer"]) == EXIT_OK

        # U002 renumbered U1002, the refused name still asked for
        _sheet(tmp_path / "subjects.xlsx", [["U001", None, "Unit 1"], ["U1002", "U002", "Unit Two"]])
        renumbering = _plan()
        assert _record(renumbering, "U1002")["renamed_from"] == ["U002"]
        assert main(["apply", "subjects.yaml", "--env", "local", "--yes"]) == EXIT_OK

        after = _plan()  # the record is U1002 now: the skip decided for U002 still holds, said once
        renumbered = _record(after, "U1002")
        assert renumbered["action"] == "unchanged" and renumbered.get("renamed_from") is None
        (message,) = _messages(after, "U1002")
        assert message.startswith("name") and "by decision (not this term; decided for U002, now U1002, Ana" in message
        assert _stale(after) == []

        assert main(["revert", "--env", "local", "--out", "revert.json"]) == EXIT_OK
        assert main(["apply", "--plan", "revert.json", "--env", "local", "--yes"]) == EXIT_OK
        _sheet(tmp_path / "subjects.xlsx", [["U001", None, "Unit 1"], ["U002", None, "Unit Two"]])
        back = _plan()  # U002 again: the skip holds under its own key
        assert _record(back, "U002")["action"] == "unchanged"
        (message,) = _messages(back, "U002")
        assert message.startswith("name") and "by decision (not this term, Ana Reviewer" in message
        assert _stale(back) == []
