"""`loader pull` writes names, e-mails and dates of birth: readable by its owner only, from the first byte."""

from __future__ import annotations

import json
import os
import stat

import openpyxl
import pytest

from loader.cli import main

SEED = {
    "institution-a": {
        "applicants": [
            {"external_id": "A-1", "first_name": "Ada", "last_name": "Lovelace", "email_address": "ada@example.edu",
             "date_of_birth": "2000-12-10"},
        ],
    },
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "samples").mkdir()
    (tmp_path / "samples" / "sandbox-seed.json").write_text(json.dumps(SEED), encoding="utf-8")
    return tmp_path


@pytest.fixture
def open_umask():
    """The most permissive umask, so a file not created 0600 would show it."""
    previous = os.umask(0)
    yield
    os.umask(previous)


def test_a_new_pull_workbook_is_owner_only(project, open_umask):
    out = project / "applicants.xlsx"
    assert main(["pull", "applicant", "--out", str(out)]) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    rows = list(openpyxl.load_workbook(out)["applicant"].iter_rows(values_only=True))
    assert "ada@example.edu" in rows[1]


def test_pulling_over_a_readable_workbook_makes_it_owner_only(project, open_umask):
    out = project / "applicants.xlsx"
    out.write_bytes(b"an older export")
    out.chmod(0o644)
    assert main(["pull", "applicant", "--out", str(out)]) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert openpyxl.load_workbook(out)["applicant"].max_row == 2
