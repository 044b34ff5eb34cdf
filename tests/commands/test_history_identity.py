"""`loader history --entity`: a record's former keys (renumbered) and, per field, who first changed it
in the platform: offline by user id, with `--env` by name (never an e-mail address on stdout); the
JSON still valid against schemas/output.schema.json. Through the CLI against the sandbox."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import openpyxl
import pytest
from helpers.apply import loader_yaml_for
from helpers.output_schema import output_document
from helpers.project import SCHOOLS_MAPPING
from helpers.sandbox import Caller, fetch_token

from loader.cli import main
from loader.errors import EXIT_OK
from loader.sandbox.server import SandboxOptions, serve_in_thread
from loader.sandbox.tokens import DEFAULT_CLIENTS, STAFF_PERSON

SECRET = "HISTORY_IDENTITY_SECRET"
STAFF_ID = next(c.user["id"] for c in DEFAULT_CLIENTS if c.client_id == "staff-client")
MAPPING = SCHOOLS_MAPPING.replace("    key: [code]\n", "    key: [code]\n    renamed: {column: Previous Code}\n")


def _schools(path: Path, rows: list[tuple[str, str | None, str]]) -> None:
    book = openpyxl.Workbook()
    book.active.title = "Schools"
    book.active.append(["Code", "Previous Code", "Name"])
    for row in rows:
        book.active.append(list(row))
    book.save(path)


@pytest.fixture
def renumbered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project whose default environment is the sandbox: school SCI loaded, renumbered to SCI2, then
    renamed by staff in the platform, and applied again with a sheet that renames it too (a conflict:
    the history records who changed it)."""
    with serve_in_thread(SandboxOptions()) as sandbox, httpx.Client(base_url=sandbox.base_url) as http:
        monkeypatch.setenv(SECRET, sandbox.client_secret)
        monkeypatch.chdir(tmp_path)
        top = "history: {path: history}\ndefault_environment: local\n"
        (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, SECRET, top=top), encoding="utf-8")
        (tmp_path / "schools.yaml").write_text(MAPPING, encoding="utf-8")
        _schools(tmp_path / "schools.xlsx", [("SCI", None, "Science")])
        assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK
        _schools(tmp_path / "schools.xlsx", [("SCI2", "SCI", "Science")])
        assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK
        staff = Caller(http, fetch_token(sandbox.base_url, sandbox.staff_client_id, sandbox.staff_client_secret))
        record = staff.get("/institution/catalogue/schools/SCI2").json()["data"]
        assert staff.patch(f"/institution/catalogue/schools/{record['id']}", {"name": "Sciences"}).status_code == 200
        _schools(tmp_path / "schools.xlsx", [("SCI2", "SCI", "School of Science")])
        assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK
        yield tmp_path


def test_a_records_history_shows_its_former_keys_and_who_changed_a_field_by_id_offline(
    renumbered: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    capsys.readouterr()
    assert main(["history", "--entity", "school", "--key", "code=SCI2"]) == EXIT_OK  # no --env: nothing read
    shown = capsys.readouterr().out
    assert "  former keys: SCI\n" in shown
    assert f"  name: changed in the platform by {STAFF_ID} at " in shown


def test_with_env_the_editor_is_named_never_by_e_mail_and_the_json_validates(
    renumbered: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    settings = (renumbered / "loader.yaml").read_text(encoding="utf-8")
    (renumbered / "loader.yaml").write_text(settings + "report: {editors: email}\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["history", "--env", "local", "--entity", "school", "--key", "code=SCI2"]) == EXIT_OK
    shown = capsys.readouterr().out
    assert "  name: changed in the platform by Robin Staff at " in shown
    assert STAFF_PERSON.email_address not in shown
    assert main(["history", "--env", "local", "--entity", "school", "--key", "code=SCI2", "--format", "json"]) == 0
    document = output_document(capsys.readouterr().out)
    assert document["former_keys"] == ["SCI"]
    (edit,) = document["edits"]
    assert (edit["field"], edit["by_id"], edit["by"]) == ("name", STAFF_ID, "Robin Staff")
    assert STAFF_PERSON.email_address not in json.dumps(document)
