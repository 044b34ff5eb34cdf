"""`loader validate` as a person reads it: every problem of a block at once, the mapping line quoted
with a caret, colour only where the conventions allow."""

from __future__ import annotations

from pathlib import Path

import pytest

from loader.cli import main
from loader.errors import EXIT_ERROR

MAPPING = """version: 1
source: schools.csv
entities:
  schools:
    entity: school
    key: [code]
    fields:
      code: {column: Code, tranform: [strip]}
      first_name: Name
      name: {column: Name, type: 5}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    (tmp_path / "schools.csv").write_text("Code,Name\nSCI,Science\n", encoding="utf-8")
    (tmp_path / "schools.yaml").write_text(MAPPING, encoding="utf-8")
    return tmp_path


def test_an_option_the_schema_refuses_hides_none_of_the_blocks_other_problems(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "schools.yaml"]) == EXIT_ERROR
    out = capsys.readouterr().out
    assert "schools.yaml:8:28: unknown key 'tranform'" in out and "did you mean 'transform'" in out
    assert "schools.yaml:10:34: expected one of: string" in out  # type: 5
    assert "schools.yaml:9:7: unknown field 'first_name' for school" in out  # found despite the two above
    assert out.splitlines()[-1] == "invalid: 3 errors, 0 warnings"


def test_each_problem_quotes_its_mapping_line_with_a_caret_under_the_column(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["validate", "schools.yaml"])
    lines = capsys.readouterr().out.splitlines()
    at = lines.index(next(line for line in lines if "unknown field 'first_name'" in line))
    assert lines[at + 1 : at + 3] == ["  9 |       first_name: Name", "    |       ^"]


def test_colour_on_a_terminal_as_forced_and_never_with_no_color(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    main(["validate", "schools.yaml"])
    assert "\x1b[" not in capsys.readouterr().out  # not a terminal
    monkeypatch.setenv("FORCE_COLOR", "1")
    main(["validate", "schools.yaml"])
    assert "\x1b[1;31merror:\x1b[0m schools.yaml:9:7: unknown field" in capsys.readouterr().out
    main(["validate", "schools.yaml", "--no-color"])
    assert "\x1b[" not in capsys.readouterr().out
