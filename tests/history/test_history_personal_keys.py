"""An entity the profile says holds personal fields (an applicant) is kept in the history only as
keyed digests, whatever the mapping marks `pii`; a history an earlier release kept in plain text
for it is refused, naming the file and the repair, never read as no history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from helpers.apply import loader_yaml_for
from openpyxl import Workbook

from loader.cli import main
from loader.errors import EXIT_ERROR, EXIT_OK
from loader.history.journal import FieldWrite
from loader.history.lines import Owner
from loader.history.store import History
from loader.sandbox.server import SandboxOptions, serve_in_thread

FIELDS = {"external_id": "ID", "first_name": "First", "last_name": "Last", "email_address": "Email"}
MAPPING = yaml.safe_dump({"version": 1, "source": "applicants.xlsx", "entities": {"applicants": {
    "entity": "applicant", "sheet": "Applicants", "key": ["external_id"], "fields": FIELDS}}})  # no `pii: true`
PERSON = ("A-4711", "Augusta", "Lovelace", "augusta@example.com")


def _project(root: Path, sandbox: object, monkeypatch: pytest.MonkeyPatch) -> Path:
    (root / "loader.yaml").write_text(
        loader_yaml_for(sandbox, "KEYS_SECRET", top="history: {key: {env: KEYS_HISTORY_KEY}}\n"), encoding="utf-8")
    monkeypatch.setenv("KEYS_SECRET", sandbox.client_secret)  # type: ignore[attr-defined]
    monkeypatch.setenv("KEYS_HISTORY_KEY", "a-long-random-history-key-for-personal-keys")
    monkeypatch.chdir(root)
    (root / "applicants.yaml").write_text(MAPPING, encoding="utf-8")
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Applicants"
    sheet.append(list(FIELDS.values()))
    sheet.append(list(PERSON))
    book.save(root / "applicants.xlsx")
    return root / "history" / "local"


def test_an_applicant_mapping_without_pii_keeps_no_personal_value_in_the_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        folder = _project(tmp_path, sandbox, monkeypatch)
        assert main(["apply", "applicants.yaml", "--env", "local", "--yes"]) == EXIT_OK
        assert main(["plan", "applicants.yaml", "--env", "local", "--detailed-exitcode"]) == EXIT_OK
    files = [path for path in folder.rglob("*") if path.is_file()]
    assert any(path.parent.name == "journal" for path in files)
    assert json.loads((folder / "head.json").read_text(encoding="utf-8"))["lines"] == {"applicant": 1}
    lines = (folder / "snapshot" / "applicant.tsv").read_text(encoding="utf-8").splitlines()
    assert len([line for line in lines if not line.startswith("#")]) == 1  # the record's line, its header aside
    for path in files:
        data = path.read_text(encoding="utf-8")
        assert not [value for value in PERSON if value in data], path


def test_a_history_keeping_an_applicant_in_plain_text_is_refused_with_the_repair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        folder = _project(tmp_path, sandbox, monkeypatch)
        plain = History.open(folder)  # as a release that keyed only `pii: true` mappings wrote it
        writer = plain.begin_apply("sandbox", plan_digest=None, by="test")
        writer.record("create", "applicant", (PERSON[0],), "00000000-0000-4000-8000-000000004711",
                      [FieldWrite("first_name", Owner("applicants.yaml", "applicants"), after=PERSON[1])])
        plain.finish_apply(writer)
        capsys.readouterr()
        assert main(["plan", "applicants.yaml", "--env", "local"]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "applicant.tsv" in err and "plain keys" in err and "loader history reset --env local" in err
