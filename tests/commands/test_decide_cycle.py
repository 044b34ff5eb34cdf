"""Decisions through the CLI against the sandbox: a skip recorded by `loader decide` from a review
workbook edited by openpyxl holds for two plan-and-apply cycles and ends when the sheet's value changes."""

from __future__ import annotations

import asyncio
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from helpers.apply import client_for
from helpers.project import SCHOOLS_SEED, schools_project, write_schools
from helpers.review import decide_row

from loader.cli import main
from loader.errors import EXIT_OK
from loader.sandbox.server import SandboxOptions, serve_in_thread


def _live_names(sandbox: Any) -> dict[str, str]:
    async def go() -> list[dict[str, Any]]:
        async with client_for(sandbox) as client:
            return await client.fetch_collection("school")

    return {s["code"]: s["name"] for s in asyncio.run(go())}


def test_a_skip_holds_for_two_plan_and_apply_cycles_and_ends_when_the_sheet_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve_in_thread(SandboxOptions(seed=SCHOOLS_SEED)) as sandbox:
        schools_project(tmp_path, sandbox, monkeypatch)
        assert main(["plan", "schools.yaml", "--env", "local", "--review", "review.xlsx"]) == EXIT_OK
        decide_row(tmp_path / "review.xlsx", "SCI", "name", "skip", "the school renames in March")
        assert main(["decide", "review.xlsx", "--by", "Ana Reviewer"]) == EXIT_OK
        capsys.readouterr()
        shown = f"skipped by decision (the school renames in March, Ana Reviewer, {date.today().isoformat()})"
        for cycle in range(2):
            assert main(["plan", "schools.yaml", "--env", "local", "--report", "plan.md"]) == EXIT_OK
            assert shown in (tmp_path / "plan.md").read_text(encoding="utf-8"), cycle
            assert shown in capsys.readouterr().out, cycle
            assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK
            live = _live_names(sandbox)
            assert live["SCI"] == "Science" and live["LAW"] == "Law", cycle  # skipped; the create went ahead
        write_schools(tmp_path / "schools.xlsx", [("SCI", "Sciences"), ("ENG", "Engineering"), ("LAW", "Law")])
        assert main(["plan", "schools.yaml", "--env", "local", "--report", "plan.md"]) == EXIT_OK
        assert "skipped by decision" not in (tmp_path / "plan.md").read_text(encoding="utf-8")
        assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK
        assert _live_names(sandbox)["SCI"] == "Sciences"  # another value: proposed and written again


def test_a_skipped_create_is_not_written_and_the_digest_binds_the_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve_in_thread(SandboxOptions(seed=SCHOOLS_SEED)) as sandbox:
        schools_project(tmp_path, sandbox, monkeypatch)
        assert main(["plan", "schools.yaml", "--env", "local", "--review", "review.xlsx", "--format", "json"]) == 0
        decide_row(tmp_path / "review.xlsx", "LAW", "CREATE", "skip", "not ready")
        assert main(["decide", "review.xlsx", "--by", "Ana Reviewer"]) == EXIT_OK
        assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK
        live = _live_names(sandbox)
        assert "LAW" not in live and live["SCI"] == "School of Science"


def _digest(project: Path) -> str:
    assert main(["plan", "schools.yaml", "--env", "local", "--report", "plan.md", "--html", "plan.html"]) == EXIT_OK
    found = re.search(r"Plan digest: `(sha256:[0-9a-f]{64})`", (project / "plan.md").read_text(encoding="utf-8"))
    assert found
    return found[1]


def test_the_digest_changes_with_decisions_not_with_their_reasons_and_apply_expects_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve_in_thread(SandboxOptions(seed=SCHOOLS_SEED)) as sandbox:
        schools_project(tmp_path, sandbox, monkeypatch)
        without = _digest(tmp_path)
        assert main(["plan", "schools.yaml", "--env", "local", "--review", "review.xlsx"]) == EXIT_OK
        decide_row(tmp_path / "review.xlsx", "SCI", "name", "skip", "renames in March")
        assert main(["decide", "review.xlsx", "--by", "Ana Reviewer"]) == EXIT_OK
        decided = _digest(tmp_path)
        assert decided != without
        assert "skipped by decision (renames in March, Ana Reviewer" in (tmp_path / "plan.html").read_text(
            encoding="utf-8")
        path = tmp_path / "decisions.yaml"
        path.write_text(path.read_text(encoding="utf-8").replace("renames in March", "a reworded reason"),
                        encoding="utf-8")
        assert _digest(tmp_path) == decided
        assert main(["apply", "schools.yaml", "--env", "local", "--yes", "--expect-digest", decided]) == EXIT_OK
        assert _live_names(sandbox) == {"SCI": "Science", "ENG": "Engineering", "LAW": "Law"}
