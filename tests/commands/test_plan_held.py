"""A plan that holds rows back stays honest, through the CLI against the sandbox as a real server with
a person editing through `staff-client`: a held conflict keeps `--detailed-exitcode` at 2 (also
after an apply, while it is shown before) and the closing line says what is held; once decided
for the platform the change is held by decision and the exit code is 0 again."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import openpyxl
import pytest
from helpers.apply import loader_yaml_for
from helpers.project import campus_mapping
from helpers.review import decide_row
from helpers.sandbox import Caller, fetch_token

from loader.cli import main
from loader.errors import EXIT_CHANGES, EXIT_OK
from loader.sandbox.server import SandboxOptions, serve_in_thread

SECRET = "PLAN_HELD_SECRET"
PATH = "/institution/catalogue/schools"


def _sheet(folder: Path, rows: list[tuple[str, str, str]]) -> None:
    book = openpyxl.Workbook()
    book.active.title = "Schools"
    book.active.append(["Code", "Name", "Campus"])
    for row in rows:
        book.active.append(list(row))
    book.save(folder / "schools.xlsx")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Caller]]:
    with serve_in_thread(SandboxOptions()) as sandbox, httpx.Client(base_url=sandbox.base_url) as http:
        monkeypatch.setenv(SECRET, sandbox.client_secret)
        monkeypatch.chdir(tmp_path)
        (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, SECRET, top="history: {path: history}\n"),
                                              encoding="utf-8")
        (tmp_path / "schools.yaml").write_text(campus_mapping(), encoding="utf-8")
        yield tmp_path, Caller(http, fetch_token(sandbox.base_url, sandbox.staff_client_id,
                                                 sandbox.staff_client_secret))


def _plan(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["plan", "schools.yaml", "--env", "local", "--detailed-exitcode", *argv])
    return code, capsys.readouterr().out


def test_a_held_conflict_keeps_the_detailed_exit_code_at_2_until_it_is_decided(
    project: tuple[Path, Caller], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, staff = project
    _sheet(folder, [("S0", "Science", "North"), ("S1", "Law", "North")])
    assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK
    applied = capsys.readouterr().out
    assert re.search(r"Done in [\d.]+ s; apply \S+\n  undo: loader revert --env local --apply \S+", applied)
    school = next(s for s in staff.all_pages(PATH) if s["code"] == "S0")
    assert staff.patch(f"{PATH}/{school['id']}", {"name": "Sciences (platform)"}).status_code == 200
    _sheet(folder, [("S0", "Science (sheet)", "North"), ("S1", "Law", "North")])

    code, shown = _plan(capsys)
    assert code == EXIT_CHANGES
    assert "No changes to write; 1 conflict held.\n" in shown
    assert "Conflicts (1)" in shown

    assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK  # writes nothing
    code, again = _plan(capsys, "--review", "review.xlsx")
    assert code == EXIT_CHANGES  # shown before, still held: CI flags it again
    assert "No changes to write; 1 conflict held.\n" in again and "No changes: " not in again

    decide_row(folder / "review.xlsx", "S0", "name", "platform", "staff know better")
    assert main(["decide", "review.xlsx", "--by", "Ana Reviewer"]) == EXIT_OK
    code, decided = _plan(capsys)
    assert code == EXIT_OK  # decided: nothing waits for a person
    assert "No changes to write; 1 change held by decision.\n" in decided


def test_without_detailed_exitcode_a_held_conflict_exits_0(
    project: tuple[Path, Caller], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, staff = project
    _sheet(folder, [("S0", "Science", "North")])
    assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK
    school = next(iter(staff.all_pages(PATH)))
    assert staff.patch(f"{PATH}/{school['id']}", {"name": "Sciences (platform)"}).status_code == 200
    _sheet(folder, [("S0", "Science (sheet)", "North")])
    capsys.readouterr()
    assert main(["plan", "schools.yaml", "--env", "local"]) == EXIT_OK
    assert "1 conflict held" in capsys.readouterr().out
