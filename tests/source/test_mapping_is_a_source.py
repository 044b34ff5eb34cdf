"""A spreadsheet named where a mapping file belongs is said to be one, with the command to draft a mapping."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from loader.cli import main


def _workbook(path: Path) -> Path:
    book = openpyxl.Workbook()
    book.active.append(["Unit code", "Unit title"])
    book.active.append(["MAT1830", "Discrete mathematics"])
    book.save(path)
    return path


@pytest.mark.parametrize("name", ["units.xlsx", "units.yaml"])  # a workbook told by its suffix, or by its bytes
def test_a_workbook_given_to_plan_points_to_loader_init(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str], name: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loader.yaml").write_text("", "utf-8")
    _workbook(tmp_path / name)
    assert main(["validate", name]) == 1
    out = capsys.readouterr()
    text = out.out + out.err
    assert "is a workbook, a source of records, not a mapping file" in text
    assert f"loader init {name}" in text and "mappings/units.yaml" in text
    assert "UTF-8" not in text


def test_a_csv_given_to_plan_is_named_a_csv_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loader.yaml").write_text("", "utf-8")
    (tmp_path / "units.csv").write_text("Unit code,Unit title\nMAT1830,Discrete mathematics\n", "utf-8")
    assert main(["validate", "units.csv"]) == 1
    out = capsys.readouterr()
    assert "units.csv is a CSV file, a source of records, not a mapping file" in out.out + out.err
