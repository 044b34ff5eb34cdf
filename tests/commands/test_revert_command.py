"""`loader revert`: undo an apply, through the command line against a sandbox as a real server.

A cycle of updates and status moves is applied, a person edits one record in the platform (the
sandbox's `staff-client`), then the revert plan is made, reviewed and applied with `apply --plan`:
the earlier state comes back exactly, except the field changed since (kept, and said) and the move
with no legal way back (said); reverting the revert applies the cycle again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from helpers.apply import PROFILE, client_for, environment_for, loader_yaml_for

from loader.api.client import ApiClient
from loader.cli import main
from loader.config import Secret
from loader.history.decisions import read_decisions
from loader.history.store import History
from loader.plan.plan_file import read_plan_json
from loader.plan.revert import CREATED, KEPT
from loader.report.review_rows import review_rows
from loader.sandbox.server import SandboxOptions, serve_in_thread

MAPPING = """version: 1
source: arrangements.xlsx
entities:
  arrangements:
    entity: arrangement
    sheet: Arrangements
    key: [code]
    fields:
      code: {column: Code}
      name: {column: Title}
      status: {column: Status}
  courses:
    entity: course
    sheet: Courses
    key: [code]
    fields:
      code: {column: Code}
      name: {column: Title}
      custom_attributes:
        Faculty: {column: Faculty}
"""
Rows = list[tuple[str, str, str]]
FIRST: Rows = [("A1", "One", "DRAFT"), ("A2", "Two", "READY"), ("A3", "Three", "DRAFT"), ("C1", "Course", "Arts")]
CYCLE: Rows = [("A1", "One, renamed", "READY"), ("A2", "Two, renamed", "ACTIVE"), ("A3", "Three, renamed", "DRAFT"),
               ("C1", "Course", "Law")]
STAFF_NAME = "Three, as staff named it"
TODAY = date(2026, 11, 25)


@pytest.fixture
def sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions()) as running:
        yield running


@pytest.fixture
def project(tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "arrangements.yaml").write_text(MAPPING, encoding="utf-8")
    text = loader_yaml_for(sandbox, "REVERT_TEST_SECRET", top="history: {path: history}\n")
    (tmp_path / "loader.yaml").write_text(text, encoding="utf-8")
    monkeypatch.setenv("REVERT_TEST_SECRET", sandbox.client_secret)
    monkeypatch.delenv("GITHUB_ACTOR", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _sheet(project: Path, rows: Rows) -> None:
    book = openpyxl.Workbook()
    arrangements = book.active
    arrangements.title = "Arrangements"
    arrangements.append(["Code", "Title", "Status"])
    courses = book.create_sheet("Courses")
    courses.append(["Code", "Title", "Faculty"])
    for row in rows:
        (courses if row[0].startswith("C") else arrangements).append(list(row))
    book.save(project / "arrangements.xlsx")


def _apply(*argv: str) -> int:
    return main(["apply", *argv, "--env", "local", "--yes", "--by", "Test"])


def _live(sandbox: Any) -> dict[str, tuple[str, str, str]]:
    """code -> (name, status) of each arrangement, (name, Faculty) of each course."""
    async def go() -> dict[str, list[dict[str, Any]]]:
        async with client_for(sandbox) as client:
            return await client.fetch_collections(["arrangement", "course"])

    live = asyncio.run(go())
    found = {r["code"]: (r["code"], r["name"], r["status"]) for r in live["arrangement"]}
    found |= {r["code"]: (r["code"], r["name"], (r.get("custom_attributes") or {}).get("Faculty"))
              for r in live["course"]}
    return found


def _staff_renames(sandbox: Any, code: str, name: str) -> None:
    """A person edits the record in the platform: the sandbox's staff client, a user of its own."""
    environment = dataclasses.replace(environment_for(sandbox), client_id="staff-client",
                                      client_secret=Secret("staff-secret"))

    async def go() -> None:
        async with ApiClient(environment, PROFILE) as client:
            found = await client.get("arrangement", (await _id_of(client, code)))
            assert found is not None
            await client.update("arrangement", found["id"], {"name": name})

    asyncio.run(go())


async def _id_of(client: ApiClient, code: str) -> str:
    records = (await client.fetch_collections(["arrangement"]))["arrangement"]
    return str(next(r["id"] for r in records if r["code"] == code))


def _state(rows: Rows) -> dict[str, tuple[str, str, str]]:
    return {row[0]: row for row in rows}


def _last_apply(project: Path) -> str | None:
    """The last apply that wrote (the head's: two applies within one second need not sort in order)."""
    return History.open(project / "history" / "local", fold_leftovers=False).head.last_apply


def _next_plan(project: Path) -> tuple[list[tuple[str, str, str]], set[tuple[str, str]]]:
    """(entity, record, field) of each change the next plan proposes, and (record, field) of each it
    holds as skipped by decision."""
    assert main(["plan", "arrangements.yaml", "--env", "local", "--out", "next.json"]) == 0
    plan = read_plan_json(project / "next.json")
    skipped = {(r.key[0], f.message.split(":", 1)[0].split(" ", 1)[0]) for r in plan.records() for f in r.findings
               if f.code == "skipped-by-decision"}  # "name: skipped …", "status READY: skipped …"
    return [(row.entity, row.record, row.field) for row in review_rows(plan)], skipped


def test_revert_undoes_a_cycle_except_fields_changed_since_and_moves_with_no_way_back_and_reverting_it_reapplies(
    project: Path, sandbox: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    _sheet(project, FIRST)
    assert _apply("arrangements.yaml") == 0
    before = _live(sandbox)
    assert before == _state(FIRST)
    _sheet(project, CYCLE)
    assert _apply("arrangements.yaml") == 0
    assert _live(sandbox) == _state(CYCLE)
    _staff_renames(sandbox, "A3", STAFF_NAME)
    capsys.readouterr()

    assert main(["revert", "--env", "local", "--out", "revert.json", "--report", "revert.md",
                 "--html", "revert.html"]) == 0
    shown = capsys.readouterr().out
    assert f"name: {KEPT}" in shown and "A3" in shown
    assert "cannot move back from ACTIVE" in shown and "apply --plan revert.json" in shown
    plan = read_plan_json(project / "revert.json")
    assert plan.revert_of == _last_apply(project) and plan.digest is not None
    report = (project / "revert.md").read_text(encoding="utf-8")
    assert plan.digest in report
    warnings = report[report.index("## Warnings"):report.index("## Changes to existing records")]
    journal = plan.blocks[0].source_file
    assert warnings.count(f"| {journal} | arrangement A") == 2  # each at the journal of the apply it undoes
    assert plan.digest in (project / "revert.html").read_text(encoding="utf-8")

    assert _apply("--plan", "revert.json") == 0
    after = _live(sandbox)
    assert after["A1"] == before["A1"]  # name and status (READY -> DRAFT) back
    assert after["A2"] == ("A2", "Two", "ACTIVE")  # ACTIVE has no legal way back to READY
    assert after["A3"] == ("A3", STAFF_NAME, "DRAFT")  # the staff's edit kept
    assert after["C1"] == before["C1"]  # the label back

    # Applying the revert recorded skip decisions: they hold the next plan back from redoing any of it
    # until the sheet changes.
    assert len(read_decisions(project / "decisions.yaml").entries) == 4
    proposed, skipped = _next_plan(project)
    assert {("A1", "name"), ("A1", "status"), ("A2", "name"), ("C1", "custom_attributes.Faculty")} <= skipped
    assert all(record == "A3" for _, record, _ in proposed)  # the staff's edit, two-way

    assert main(["revert", "--env", "local", "--out", "again.json"]) == 0
    again = read_plan_json(project / "again.json")
    assert again.revert_of == _last_apply(project) != plan.revert_of
    assert _apply("--plan", "again.json") == 0
    assert _live(sandbox) == {**_state(CYCLE), "A3": ("A3", STAFF_NAME, "DRAFT")}
    assert len(read_decisions(project / "decisions.yaml").entries) == 4  # each replacing the skip about the same field
    assert all(record == "A3" for _, record, _ in _next_plan(project)[0])


def test_a_revert_of_the_first_load_lists_what_it_created_for_retirement_by_hand(
    project: Path, sandbox: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    _sheet(project, FIRST)
    assert _apply("arrangements.yaml") == 0
    first = _last_apply(project)
    assert first is not None
    _sheet(project, CYCLE)
    assert _apply("arrangements.yaml") == 0
    capsys.readouterr()
    assert main(["revert", "--env", "local", "--apply", first]) == 0
    assert "Nothing to put back through the service" in capsys.readouterr().out
    assert main(["revert", "--env", "local", "--apply", first, "--out", "first.json", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    plan = read_plan_json(project / "first.json")
    assert plan.records() == () and not plan.has_changes
    messages = [f.message for block in plan.blocks for f in block.findings]
    assert len(messages) == 4 and all(m.endswith(CREATED) for m in messages)
    assert document is not None


def test_revert_without_an_apply_to_undo_says_so(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["revert", "--env", "local"]) == 1
    assert "nothing to revert" in capsys.readouterr().err
    assert main(["revert", "--env", "local", "--apply", "20260101T000000Z-abcdef"]) == 1


def test_revert_with_the_history_off_says_there_is_nothing_recorded(
    project: Path, sandbox: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    text = loader_yaml_for(sandbox, "REVERT_TEST_SECRET", top="history: false\n")
    (project / "loader.yaml").write_text(text, encoding="utf-8")
    assert main(["revert", "--env", "local"]) != 0
    err = capsys.readouterr().err
    assert "history is off" in err and "Traceback" not in err
