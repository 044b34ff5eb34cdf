"""A catalogue renumbered between two cycles, through the CLI against the sandbox: 30 subject codes
renumbered (`renamed:`), one old code reused by a new unit, an arrangements file still naming two old
codes. Plan, apply, re-plan, revert, and the plan after the revert. And a reviewer's skip decided under
an old code, which follows the record renumbered and back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.apply import live_records, loader_yaml_for
from helpers.mapping import write_workbook
from helpers.review import decide_row, sheet_rows

from loader.cli import main
from loader.errors import EXIT_OK
from loader.history.store import History
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
ARRANGEMENTS = """version: 1
source: arrangements.xlsx
entities:
  arrangements:
    entity: arrangement
    sheet: Arrangements
    key: [code]
    fields:
      code: Code
      name: Title
      subjects_awarded: {ref: subject, column: Subjects Awarded, split: ";"}
"""
HEADER = ["Code", "Previous Code", "Name"]
OLD = [f"U{n:03d}" for n in range(1, 31)]
NEW = [f"U{n + 1000:04d}" for n in range(1, 31)]


def _sheet(path: Path, title: str, header: list[str], rows: list[list[Any]]) -> None:
    write_workbook(path, {title: [header, *rows]})


def _plan(name: str) -> dict[str, Any]:
    assert main(["plan", "subjects.yaml", "arrangements.yaml", "--env", "local", "--format", "json", "--out",
                 name]) == EXIT_OK
    return dict(json.loads(Path(name).read_text(encoding="utf-8")))


def _records(plan: dict[str, Any], block: str) -> list[dict[str, Any]]:
    return [r for b in plan["blocks"] if b["name"] == block for r in b["records"]]


def _codes(findings: list[dict[str, Any]], code: str) -> int:
    return sum(1 for f in findings if f["code"] == code)


def _live_codes(sandbox: Any) -> dict[str, str]:
    return {str(s["id"]): str(s["code"]) for s in live_records(sandbox, "subject")}


def _project(tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The two mapping files and loader.yaml for `sandbox`, in `tmp_path` made the working directory."""
    (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "RENUMBER_SECRET"), encoding="utf-8")
    monkeypatch.setenv("RENUMBER_SECRET", sandbox.client_secret)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "subjects.yaml").write_text(SUBJECTS, encoding="utf-8")
    (tmp_path / "arrangements.yaml").write_text(ARRANGEMENTS, encoding="utf-8")


def _renumbers_reviewed_as_such() -> None:
    """The review workbook labels each renumber's row `renumber U001 → U1001`, in the layout of every row."""
    assert main(["plan", "subjects.yaml", "arrangements.yaml", "--env", "local", "--review", "review.xlsx"]) == 0
    rows = sheet_rows(Path("review.xlsx"))
    renumbers = [r for r in rows if str(r["change"]).startswith("renumber ")]
    assert len(renumbers) == 30
    first = next(r for r in renumbers if r["record"] == "U1001")
    assert (first["change"], first["field"], first["current value"], first["proposed value"]) == (
        "renumber U001 → U1001", "code", "U001", "U1001")


def test_a_renumbered_catalogue_plans_applies_replans_empty_and_reverts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        _project(tmp_path, sandbox, monkeypatch)
        _sheet(tmp_path / "subjects.xlsx", "Subjects", HEADER, [[code, None, f"Unit {code}"] for code in OLD])
        _sheet(tmp_path / "arrangements.xlsx", "Arrangements", ["Code", "Title", "Subjects Awarded"],
               [["A1", "Articulation", "U002;U003"]])
        assert main(["apply", "subjects.yaml", "arrangements.yaml", "--env", "local", "--yes"]) == EXIT_OK
        first = _live_codes(sandbox)

        # the next cycle: every code renumbered, U001 reused by a new unit, the arrangements unchanged
        _sheet(tmp_path / "subjects.xlsx", "Subjects", HEADER,
               [[new, old, f"Unit {old}"] for old, new in zip(OLD, NEW, strict=True)] + [["U001", None, "New unit"]])
        plan = _plan("plan.json")
        _renumbers_reviewed_as_such()
        subjects = _records(plan, "subjects")
        assert sum(1 for r in subjects if r.get("renamed_from")) == 30
        assert [r["key"] for r in subjects if r["action"] == "create"] == [["U001"]]
        (arrangement,) = _records(plan, "arrangements")
        assert _codes(arrangement["findings"], "renumbered-reference") == 2  # U002 and U003: update the sheet
        assert not [f for r in subjects for f in r["findings"] if f["severity"] == "error"]
        assert main(["apply", "subjects.yaml", "arrangements.yaml", "--env", "local", "--yes"]) == EXIT_OK
        renumbered = _live_codes(sandbox)
        assert all(renumbered[i] == NEW[OLD.index(code)] for i, code in first.items())  # same ids, new codes
        assert sorted(renumbered.values()).count("U001") == 1

        again = _plan("again.json")  # nothing left to do; the old names still resolve, with a warning
        assert all(r["action"] == "unchanged" for b in again["blocks"] for r in b["records"])
        (arrangement,) = _records(again, "arrangements")
        assert _codes(arrangement["findings"], "renumbered-reference") == 2
        history = History.open(tmp_path / "history" / "local")
        line = history.line("subject", ("U1002",))
        assert line is not None and line.former_keys == ('["U002"]',)
        capsys.readouterr()
        assert main(["history", "--env", "local", "--entity", "arrangement", "--key", "code=A1"]) == EXIT_OK
        (awarded,) = [t for t in capsys.readouterr().out.splitlines() if t.startswith("    subjects_awarded: ")]
        assert "subject U1002" in awarded and "subject U1003" in awarded and "id " not in awarded  # by key

        assert main(["revert", "--env", "local", "--out", "revert.json"]) == EXIT_OK
        assert main(["apply", "--plan", "revert.json", "--env", "local", "--yes"]) == EXIT_OK
        back = _live_codes(sandbox)
        # every code back but the one the new unit holds now (the revert says so and leaves it)
        assert sum(1 for i, code in first.items() if back[i] == code) == 29
        assert Path("revert.json").read_text(encoding="utf-8").count("cannot go back to U001") == 1

        after = _plan("after.json")
        subjects = _records(after, "subjects")
        skipped = [r for r in subjects if _codes(r["findings"], "skipped-by-decision")]
        assert len(skipped) == 29 and all(r["action"] == "unchanged" for r in skipped)
        assert sorted(r["key"][0] for r in skipped) == NEW[1:]  # each renumber the revert undid, held back
        assert not [r for r in subjects if r["action"] != "unchanged"]  # no create, no renumber
        # The 30th is no skipped renumber: it still has its new code (the unit created last cycle holds
        # U001, as the revert said once), which is what its row asks for: nothing to do, nothing held.
        (kept,) = [r for r in subjects if r["key"] == ["U1001"]]
        assert kept["findings"] == [] and kept.get("renamed_from") is None and back[kept["live_id"]] == "U1001"


def _one(plan: dict[str, Any], code: str) -> dict[str, Any]:
    (record,) = [r for b in plan["blocks"] for r in b["records"] if r["key"] == [code]]
    return dict(record)


def _messages(plan: dict[str, Any], code: str) -> list[str]:
    return [str(f["message"]) for f in _one(plan, code)["findings"] if f["code"] == "skipped-by-decision"]


def _stale(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in plan["findings"] if f["code"] == "stale-decision"]


def test_a_skip_decided_under_the_old_code_follows_the_renumber_and_its_revert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        _project(tmp_path, sandbox, monkeypatch)
        _sheet(tmp_path / "arrangements.xlsx", "Arrangements", ["Code", "Title", "Subjects Awarded"], [])
        _sheet(tmp_path / "subjects.xlsx", "Subjects", HEADER, [["U001", None, "Unit 1"], ["U002", None, "Unit 2"]])
        assert main(["apply", "subjects.yaml", "--env", "local", "--yes"]) == EXIT_OK

        # a name change of U002 refused before the renumber
        _sheet(tmp_path / "subjects.xlsx", "Subjects", HEADER, [["U001", None, "Unit 1"], ["U002", None, "Unit Two"]])
        assert main(["plan", "subjects.yaml", "--env", "local", "--review", "review.xlsx"]) == EXIT_OK
        decide_row(tmp_path / "review.xlsx", "U002", "name", "skip", "not this term")
        assert main(["decide", "review.xlsx", "--by", "Ana Reviewer"]) == EXIT_OK

        # U002 renumbered U1002, the refused name still asked for
        _sheet(tmp_path / "subjects.xlsx", "Subjects", HEADER,
               [["U001", None, "Unit 1"], ["U1002", "U002", "Unit Two"]])
        renumbering = _plan("renumbering.json")
        assert _one(renumbering, "U1002")["renamed_from"] == ["U002"]
        assert main(["apply", "subjects.yaml", "--env", "local", "--yes"]) == EXIT_OK

        after = _plan("after.json")  # the record is U1002 now: the skip decided for U002 holds, said once
        renumbered = _one(after, "U1002")
        assert renumbered["action"] == "unchanged" and renumbered.get("renamed_from") is None
        (message,) = _messages(after, "U1002")
        assert message.startswith("name") and "by decision (not this term; decided for U002, now U1002, Ana" in message
        assert _stale(after) == []

        assert main(["revert", "--env", "local", "--out", "revert.json"]) == EXIT_OK
        assert main(["apply", "--plan", "revert.json", "--env", "local", "--yes"]) == EXIT_OK
        _sheet(tmp_path / "subjects.xlsx", "Subjects", HEADER, [["U001", None, "Unit 1"], ["U002", None, "Unit Two"]])
        back = _plan("back.json")  # U002 again: the skip holds under its own key
        assert _one(back, "U002")["action"] == "unchanged"
        (message,) = _messages(back, "U002")
        assert message.startswith("name") and "by decision (not this term, Ana Reviewer" in message
        assert _stale(back) == []
