"""`loader init` writes a first test beside each draft: synthetic values, `draft: true`, passing."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from helpers.mapping import write_workbook

from loader.cli import main
from loader.plan.mapping_tests.draft_test import synthetic


def test_init_writes_a_draft_test_from_synthetic_values_that_passes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loader.yaml").write_text("")
    write_workbook(tmp_path / "people.xlsx", {"Applicants": [
        ["Applicant ID", "First Name", "Last Name", "Email", "Date of Birth"],
        ["A1000123", "Olivia", "Nguyen", "olivia.nguyen@example.com", datetime(2007, 3, 14)],
        ["A1000124", "Liam", "Smith", "liam.smith@example.com", datetime(2006, 11, 2)],
        ["A1000125", "Ava", "Brown", "ava.brown@example.com", datetime(2007, 1, 30)],
    ]})
    assert main(["init", "people.xlsx", "--entity", "applicant"]) == 0
    out = capsys.readouterr().out
    assert "wrote mappings/tests/people.test.yaml" in out
    assert "1 draft test: review it" in out
    text = (tmp_path / "mappings" / "tests" / "people.test.yaml").read_text()
    assert "draft: true" in text
    for real in ("A1000123", "Olivia", "Nguyen", "olivia.nguyen", "2007-03-14", "Liam", "Smith", "Brown"):
        assert real not in text
    assert main(["test"]) == 0
    assert "1 case in 1 test file: all passed; 1 draft test: review it" in capsys.readouterr().out


def test_a_synthetic_value_keeps_the_shape_and_never_the_value() -> None:
    assert synthetic("MATH1001", 0) == "ABCD4567"
    assert synthetic("MATH1001", 1) != synthetic("MATH1001", 0)
    assert synthetic("o.n@example.com", 0).count("@") == 1
    assert synthetic(datetime(2007, 3, 14), 2) == "2000-01-03"
