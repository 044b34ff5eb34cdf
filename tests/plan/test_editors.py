"""Who changed a record, by name: a conflict in the Markdown report names "Robin Staff" (the
sandbox's staff-client, standing for a person editing in the platform), not a user id, and the
value the loader last loaded; with `report: {editors: id}` the id. Through the CLI against the
sandbox as a real server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers.apply import loader_yaml_for
from helpers.project import SCHOOLS_MAPPING, write_schools
from helpers.sandbox import Caller, fetch_token

from loader.cli import main
from loader.errors import EXIT_OK
from loader.sandbox.server import SandboxOptions, serve_in_thread
from loader.sandbox.tokens import DEFAULT_CLIENTS, STAFF_PERSON

SECRET = "EDITORS_TEST_SECRET"
STAFF_ID = next(c.user["id"] for c in DEFAULT_CLIENTS if c.client_id == "staff-client")
STAFF_EMAIL = STAFF_PERSON.email_address


@pytest.fixture
def edited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    """A project whose school SCI staff renamed in the platform after the loader loaded it, and whose
    sheet renames it too: a conflict. Yields the project and its loader.yaml text."""
    with serve_in_thread(SandboxOptions()) as sandbox, httpx.Client(base_url=sandbox.base_url) as http:
        monkeypatch.setenv(SECRET, sandbox.client_secret)
        monkeypatch.chdir(tmp_path)
        settings = loader_yaml_for(sandbox, SECRET, top="history: {path: history}\n")
        (tmp_path / "loader.yaml").write_text(settings, encoding="utf-8")
        (tmp_path / "schools.yaml").write_text(SCHOOLS_MAPPING, encoding="utf-8")
        write_schools(tmp_path / "schools.xlsx", [("SCI", "Science")])
        assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK
        staff = Caller(http, fetch_token(sandbox.base_url, sandbox.staff_client_id, sandbox.staff_client_secret))
        record = staff.get("/institution/catalogue/schools/SCI").json()["data"]
        assert staff.patch(f"/institution/catalogue/schools/{record['id']}", {"name": "Sciences"}).status_code == 200
        write_schools(tmp_path / "schools.xlsx", [("SCI", "School of Science")])
        yield tmp_path, settings


def test_a_conflict_in_the_markdown_names_robin_staff_not_an_id(edited: tuple[Path, str]) -> None:
    folder, _ = edited
    assert main(["plan", "schools.yaml", "--env", "local", "--report", "plan.md"]) == EXIT_OK
    report = (folder / "plan.md").read_text(encoding="utf-8")
    assert "conflict" in report and "changed in the platform by Robin Staff" in report
    assert STAFF_ID not in report
    assert 'last loaded "Science"' in report  # the value the loader wrote, from its journal


def test_editors_id_names_the_user_id(edited: tuple[Path, str]) -> None:
    folder, settings = edited
    (folder / "loader.yaml").write_text(settings + "report: {editors: id}\n", encoding="utf-8")
    assert main(["plan", "schools.yaml", "--env", "local", "--report", "plan.md"]) == EXIT_OK
    report = (folder / "plan.md").read_text(encoding="utf-8")
    assert f"changed in the platform by {STAFF_ID}" in report and "Robin Staff" not in report


def test_editors_email_names_the_address_in_the_markdown_and_the_name_on_the_terminal(
    edited: tuple[Path, str], capsys: pytest.CaptureFixture[str],
) -> None:
    folder, settings = edited
    (folder / "loader.yaml").write_text(settings + "report: {editors: email}\n", encoding="utf-8")
    assert main(["plan", "schools.yaml", "--env", "local", "--report", "plan.md", "--out", "plan.json"]) == EXIT_OK
    report = (folder / "plan.md").read_text(encoding="utf-8")
    assert f"changed in the platform by {STAFF_EMAIL}" in report and STAFF_ID not in report
    assert (folder / "plan.md").stat().st_mode & 0o077 == 0  # the address only in a file of its owner
    shown = capsys.readouterr().out
    assert "Robin Staff" in shown and STAFF_EMAIL not in shown
    saved = (folder / "plan.json").read_text(encoding="utf-8")
    assert STAFF_EMAIL not in saved and STAFF_ID in saved and "Robin Staff" in saved  # the id stays, as recorded
