"""`loader validate`: offline, every problem with its place, a summary per block, exit 1 on errors."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from helpers.mapping import write_mapping, write_workbook

from loader.commands import validate
from loader.config import load_config
from loader.errors import MappingError


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    validate.add_arguments(parser)
    args = parser.parse_args(list(argv))
    return validate.run(validate.request_from(args), load_config(None))


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_workbook(tmp_path / "cur.xlsx", {"Courses": [
        ["Code", "Title", "School"],
        ["BSC", "Science", "SCI"],
        ["BA", None, "ART"],
        ["BENG", "Engineering", "=1+1"],
    ]})
    return tmp_path


GOOD = """\
version: 1
source: cur.xlsx
entities:
  courses:
    entity: course
    sheet: Courses
    key: [code]
    fields:
      code: Code
      name: {column: Title, empty: error}
      parent: {ref: school, column: School}
"""


def test_validate_prints_each_problem_with_its_place_and_a_summary_and_exits_1(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_mapping(workdir / "m.yaml", GOOD)
    assert _run("m.yaml") == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "warning: cur.xlsx › Courses › C4: formula has no cached value (the file was saved by a program that does "
        "not calculate formulas), so the cell is read as empty; open and save the file in Excel or LibreOffice",
        "error: cur.xlsx › Courses › B3 (BA): name: a value is required here (the mapping says `empty: error`)",
        "",
        "m.yaml courses (course) from cur.xlsx › Courses: 3 rows read, 2 records built, 1 error, 1 warning",
        "invalid: 1 error, 1 warning",
    ]


def test_validate_exits_0_when_only_warnings_remain(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_mapping(workdir / "m.yaml", GOOD.replace("empty: error", "empty: skip"))
    assert _run("m.yaml") == 0
    assert capsys.readouterr().out.splitlines()[-1] == "valid: 0 errors, 1 warning"


def test_validate_reports_mistakes_of_several_files_at_once(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_mapping(workdir / "a.yaml", GOOD.replace("sheet: Courses", "sheet: Course"))
    write_mapping(workdir / "b.yaml", GOOD.replace("code: Code", "code: Kode").replace("entity: course", "entity: x"))
    assert _run("a.yaml", "b.yaml") == 1
    out = capsys.readouterr().out
    assert "error: a.yaml:6:12: cur.xlsx has no sheet 'Course'" in out
    assert "error: b.yaml:5:13: unknown entity 'x'" in out
    assert out.splitlines()[-1] == "invalid: 2 errors, 0 warnings"


def test_validate_of_a_missing_mapping_file_raises_a_mapping_error(workdir: Path) -> None:
    with pytest.raises(MappingError, match=r"nope\.yaml: file not found"):
        _run("nope.yaml")


def test_the_command_line_runs_validate_with_exit_codes(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from loader.cli import main

    write_mapping(workdir / "m.yaml", GOOD.replace("empty: error", "empty: skip"))
    assert main(["validate", "m.yaml"]) == 0
    write_mapping(workdir / "bad.yaml", "version: 2\nentities: {}\n")
    assert main(["validate", "bad.yaml"]) == 1
    out = capsys.readouterr().out
    assert "error: bad.yaml:1:10: expected 1, got a number (2)" in out
    assert "error: bad.yaml:2:11: expected at least one entry, got none" in out
    assert main(["validate", "missing.yaml"]) == 1
    assert "missing.yaml: file not found" in capsys.readouterr().err


@pytest.mark.slow
def test_validate_works_from_a_built_package_not_only_the_source_tree(workdir: Path) -> None:
    """The schemas are package data: build the package as a wheel would lay it out, run from there."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    built = workdir / "build"
    subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py",
                    "--build-lib", str(built)], cwd=root, check=True, capture_output=True)
    write_mapping(workdir / "m.yaml", GOOD.replace("empty: error", "empty: skip"))
    done = subprocess.run(
        [sys.executable, "-c", "import sys, loader, loader.cli; print(loader.__file__); "
         "sys.exit(loader.cli.main(['validate', 'm.yaml']))"],
        cwd=workdir, env={"PYTHONPATH": str(built), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    first, *_, last = done.stdout.splitlines()
    assert first.startswith(str(built))
    assert last == "valid: 0 errors, 1 warning"
