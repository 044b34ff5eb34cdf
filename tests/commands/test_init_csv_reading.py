"""`loader init` on CSV files saved by Windows tools: `--encoding`, `--delimiter`, and Windows-1252
told by its bytes 0x80-0x9F (curly quotes, dashes), written into the draft as `encoding: cp1252`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from loader.cli import main
from loader.errors import EXIT_OK, EXIT_USAGE

ROWS = "School Code;School Name\nSCI;“Science” – Faculty\nENG;Engineering’s school\n"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_windows_1252_csv_is_detected_read_as_cp1252_and_said(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "schools.csv").write_bytes(ROWS.encode("cp1252"))
    assert main(["init", "schools.csv", "--out", "schools.yaml"]) == EXIT_OK
    assert "read as cp1252 (`encoding: cp1252` in the draft)" in capsys.readouterr().err
    draft = yaml.safe_load((workdir / "schools.yaml").read_text(encoding="utf-8"))
    assert draft["encoding"] == "cp1252"
    assert main(["validate", "schools.yaml"]) == EXIT_OK


@pytest.mark.parametrize(("args", "expected"), [
    (["--encoding", "cp1252"], {"encoding": "cp1252"}),
    (["--encoding", "cp1252", "--delimiter", ";"], {"encoding": "cp1252", "delimiter": ";"}),
])
def test_encoding_and_delimiter_given_are_used_and_written_into_the_draft(
    workdir: Path, args: list[str], expected: dict[str, str]
) -> None:
    (workdir / "schools.csv").write_bytes(ROWS.encode("cp1252"))
    assert main(["init", "schools.csv", "--out", "schools.yaml", *args]) == EXIT_OK
    draft = yaml.safe_load((workdir / "schools.yaml").read_text(encoding="utf-8"))
    assert {k: draft[k] for k in expected} == expected
    assert main(["validate", "schools.yaml"]) == EXIT_OK


def test_a_utf8_csv_gets_no_encoding_line(workdir: Path) -> None:
    (workdir / "schools.csv").write_text(ROWS, encoding="utf-8")
    assert main(["init", "schools.csv", "--out", "schools.yaml"]) == EXIT_OK
    assert "encoding" not in yaml.safe_load((workdir / "schools.yaml").read_text(encoding="utf-8"))


def test_a_latin1_file_read_as_utf8_by_plan_is_told_to_say_cp1252(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "schools.csv").write_bytes(ROWS.encode("cp1252"))
    assert main(["init", "schools.csv", "--out", "schools.yaml", "--encoding", "cp1252"]) == EXIT_OK
    text = (workdir / "schools.yaml").read_text(encoding="utf-8").replace("encoding: cp1252\n", "")
    (workdir / "schools.yaml").write_text(text, encoding="utf-8")
    capsys.readouterr()
    assert main(["validate", "schools.yaml"]) == 1
    assert "set `encoding: cp1252` in the mapping" in capsys.readouterr().out


@pytest.mark.parametrize("args", [["--delimiter", ";;"], ["--encoding", "cp1252"]])
def test_wrong_reading_options_are_usage_errors(workdir: Path, args: list[str]) -> None:
    import openpyxl

    openpyxl.Workbook().save(workdir / "book.xlsx")
    (workdir / "schools.csv").write_text(ROWS, encoding="utf-8")
    target = "schools.csv" if args[0] == "--delimiter" else "book.xlsx"
    assert main(["init", target, "--out", "x.yaml", *args]) == EXIT_USAGE
