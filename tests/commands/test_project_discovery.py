"""A command run anywhere below a project works on that project: loader.yaml found upward (or named
by LOADER_CONFIG), the built-in sandbox's state at the project's root, the project's mappings taken
when none are named."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.project import SCHOOLS_SEED, schools_project

from loader.cli import main
from loader.config import load_config
from loader.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK, EXIT_USAGE
from loader.project import bare_root, find_config, project_mappings
from loader.sandbox.server import SandboxOptions, serve_in_thread


@pytest.fixture
def sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions(seed=SCHOOLS_SEED)) as running:
        yield running


@pytest.fixture
def project(tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The schools project with its mapping and workbook moved under mappings/, and a test case
    under mappings/tests/ that must never be planned."""
    root = schools_project(tmp_path, sandbox, monkeypatch)
    (root / ".git").mkdir()
    mappings = root / "mappings"
    (mappings / "tests").mkdir(parents=True)
    (root / "schools.yaml").rename(mappings / "schools.yaml")
    (root / "schools.xlsx").rename(mappings / "schools.xlsx")
    (mappings / "tests" / "schools.test.yaml").write_text("cases: [not a mapping]\n", encoding="utf-8")
    return root


def _totals(capsys: pytest.CaptureFixture[str]) -> dict[str, int]:
    document = json.loads(capsys.readouterr().out)
    return {name: count for name, count in document["totals"].items() if count}


def test_a_plan_from_a_subfolder_uses_the_project_above(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project / "mappings")
    assert main(["plan", "--env", "local", "--format", "json", "--detailed-exitcode"]) == EXIT_CHANGES
    # The project's sandbox (SCI and ENG live): a fresh built-in one would make three creates.
    totals = _totals(capsys)
    assert (totals["create"], totals["update"], totals["unchanged"]) == (1, 1, 1)
    assert not (project / "mappings" / ".loader").exists()


def test_the_configuration_used_is_logged_with_v(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project / "mappings" / "tests")
    assert main(["validate", "-v"]) == EXIT_OK
    assert f"configuration: {project / 'loader.yaml'}" in capsys.readouterr().err


def test_loader_config_names_the_file(project: Path, tmp_path_factory: pytest.TempPathFactory,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("LOADER_CONFIG", str(project / "loader.yaml"))
    assert find_config() == project / "loader.yaml"
    assert load_config(None).root == project


def test_loader_config_naming_nothing_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOADER_CONFIG", str(tmp_path / "missing.yaml"))
    assert main(["validate", "x.yaml"]) == EXIT_ERROR
    assert "LOADER_CONFIG names" in capsys.readouterr().err
    monkeypatch.setenv("LOADER_CONFIG", " ")
    assert main(["validate", "x.yaml"]) == EXIT_USAGE


def test_the_search_stops_at_the_repository_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "loader.yaml").write_text("default_environment: sandbox\n", encoding="utf-8")
    repository = tmp_path / "repository"
    (repository / ".git").mkdir(parents=True)
    (repository / "mappings").mkdir()
    monkeypatch.chdir(repository / "mappings")
    assert find_config() is None  # a loader.yaml above the repository belongs to something else
    assert bare_root() == repository
    assert load_config(None).root == repository


def test_without_loader_yaml_the_state_folder_marks_the_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".loader").mkdir()
    (tmp_path / "mappings" / "faculty").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "mappings" / "faculty")
    assert bare_root() == tmp_path


def test_the_project_mappings_leave_out_tests_and_other_files(project: Path) -> None:
    (project / "mappings" / "faculty").mkdir()
    (project / "mappings" / "faculty" / "courses.yml").write_text("version: 1\n", encoding="utf-8")
    (project / "mappings" / "notes.txt").write_text("not a mapping\n", encoding="utf-8")
    assert project_mappings(project) == (Path("mappings/faculty/courses.yml"), Path("mappings/schools.yaml"))


def test_no_mappings_anywhere_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["plan"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "no mapping files given, and none in" in err and "mappings" in err


def test_v_lines_start_with_their_time(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "-v"]) == EXIT_OK
    first = capsys.readouterr().err.splitlines()[0]
    assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3} configuration: .*loader\.yaml", first), first
