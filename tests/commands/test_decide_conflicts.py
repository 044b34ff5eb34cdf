"""Conflicts decided in the review workbook, through the CLI against the sandbox as a real server,
with a person editing through `staff-client`: a conflict decided for the sheet is written over the
platform edit (a plain field, and one `custom_attributes` label with the platform's other labels
kept); one decided for the platform is shown as skipped by decision, not as a conflict, and holds
until the sheet proposes another value."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openpyxl
import pytest
from helpers.apply import loader_yaml_for
from helpers.project import campus_mapping
from helpers.review import decide_row
from helpers.sandbox import Caller, fetch_token

from loader.cli import main
from loader.errors import EXIT_OK
from loader.sandbox.server import SandboxOptions, serve_in_thread

SECRET = "DECIDE_CONFLICTS_SECRET"
PATH = "/institution/catalogue/schools"


def _sheet(folder: Path, rows: list[tuple[str, str, str]]) -> None:
    book = openpyxl.Workbook()
    book.active.title = "Schools"
    book.active.append(["Code", "Name", "Campus"])
    for row in rows:
        book.active.append(list(row))
    book.save(folder / "schools.xlsx")


def _loader(*argv: str) -> int:
    return main([*argv, "--env", "local"])


class _Staff:
    """A person editing schools in the platform's own interface."""

    def __init__(self, caller: Caller) -> None:
        self.caller = caller

    def get(self, code: str) -> dict[str, Any]:
        answer = self.caller.get(f"{PATH}/{code}")
        assert answer.status_code == 200, answer.text
        record: dict[str, Any] = answer.json()["data"]
        return record

    def edit(self, code: str, body: dict[str, Any]) -> None:
        answer = self.caller.patch(f"{PATH}/{self.get(code)['id']}", body)
        assert answer.status_code == 200, answer.text


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, _Staff]]:
    with serve_in_thread(SandboxOptions()) as sandbox, httpx.Client(base_url=sandbox.base_url) as http:
        monkeypatch.setenv(SECRET, sandbox.client_secret)
        monkeypatch.chdir(tmp_path)
        (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, SECRET, top="history: {path: history}\n"),
                                              encoding="utf-8")
        (tmp_path / "schools.yaml").write_text(campus_mapping(), encoding="utf-8")
        staff = Caller(http, fetch_token(sandbox.base_url, sandbox.staff_client_id, sandbox.staff_client_secret))
        yield tmp_path, _Staff(staff)


def test_conflicts_decided_for_the_sheet_are_written_and_for_the_platform_are_skipped_by_decision(
    project: tuple[Path, _Staff], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, staff = project
    _sheet(folder, [("S0", "Science", "North"), ("S1", "Law", "North"), ("S2", "Arts", "North")])
    assert _loader("apply", "schools.yaml", "--yes") == EXIT_OK
    staff.edit("S0", {"name": "Sciences (platform)"})
    staff.edit("S1", {"custom_attributes": {"Campus": "East", "Room": "12"}})
    staff.edit("S2", {"name": "Arts (platform)"})
    _sheet(folder, [("S0", "Science (sheet)", "North"), ("S1", "Law", "South"), ("S2", "Arts (sheet)", "North")])
    assert _loader("plan", "schools.yaml", "--review", "review.xlsx", "--report", "before.md") == EXIT_OK
    assert (folder / "before.md").read_text(encoding="utf-8").count("onflict") >= 3  # three conflicts held
    decide_row(folder / "review.xlsx", "S0", "name", "sheet", "the sheet is right")
    decide_row(folder / "review.xlsx", "S1", "custom_attributes.Campus", "sheet", "moved in May")
    decide_row(folder / "review.xlsx", "S2", "name", "platform", "staff know better")
    assert main(["decide", "review.xlsx", "--by", "Ana Reviewer"]) == EXIT_OK
    capsys.readouterr()

    assert _loader("plan", "schools.yaml", "--out", "plan.json") == EXIT_OK
    report = capsys.readouterr().out
    assert "name: the sheet's value written over the platform edit by decision (the sheet is right, Ana Reviewer" \
        in report
    assert "custom_attributes.Campus: the sheet's value written over the platform edit by decision (moved in May" \
        in report
    assert "name (a conflict: the platform's value kept): skipped by decision (staff know better, Ana Reviewer" \
        in report
    assert _loader("apply", "--plan", "plan.json", "--yes") == EXIT_OK
    assert staff.get("S0")["name"] == "Science (sheet)"
    assert staff.get("S1")["custom_attributes"] == {"Campus": "South", "Room": "12"}  # the platform's Room kept
    assert staff.get("S2")["name"] == "Arts (platform)"

    capsys.readouterr()
    assert _loader("plan", "schools.yaml") == EXIT_OK
    again = capsys.readouterr().out
    assert "written over the platform edit" not in again  # settled: the sheet's values are live and W
    assert "skipped by decision (staff know better" in again  # the platform's value still kept by decision
    assert "No changes to write; 1 change held by decision." in again

    _sheet(folder, [("S0", "Science (sheet)", "South"), ("S1", "Law", "South"), ("S2", "Arts (new)", "North")])
    assert _loader("plan", "schools.yaml") == EXIT_OK
    changed = capsys.readouterr().out
    assert "skipped by decision" not in changed and "Arts (new)" in changed  # another value: a conflict again
