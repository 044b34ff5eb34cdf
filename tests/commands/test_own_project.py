"""A project of one's own: a folder with a loader.yaml, whose built-in sandbox starts empty.

The loader's checkout (no loader.yaml, a `samples/sandbox-seed.json`) seeds its sandbox with the
sample records, so a user's data planned there would list them as 'not in source' in every plan;
`loader init` outside a project says so, and in a project its drafts plan against an empty sandbox.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.plan import REPO, copy_samples

from loader.cli import main
from loader.errors import EXIT_CHANGES, EXIT_OK

CURRICULUM = REPO / "samples" / "intake-2027" / "curriculum.xlsx"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copy(CURRICULUM, tmp_path / "curriculum.xlsx")
    return tmp_path


def test_init_in_the_checkout_says_it_is_no_project_and_the_sandbox_holds_the_samples(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy_samples(folder)
    assert main(["init", "curriculum.xlsx", "--out", "mine.yaml"]) == EXIT_OK
    err = capsys.readouterr().err
    assert f"note: {folder} has no loader.yaml, so it is not a loader project" in err
    assert "seeded with the loader's sample records (samples/sandbox-seed.json)" in err
    assert "'not in source'" in err and "Start a project of your own in a new folder" in err


def test_init_in_a_bare_folder_says_it_is_no_project(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "curriculum.xlsx"]) == EXIT_OK
    err = capsys.readouterr().err
    assert f"note: {folder} has no loader.yaml, so it is not a loader project. To make it one, add a loader.yaml" in err
    assert "sample records" not in err


def test_in_a_project_init_says_nothing_of_it_and_the_sandbox_starts_empty(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "samples").mkdir()  # the sample seed is there, but a project's sandbox does not take it
    shutil.copy(REPO / "samples" / "sandbox-seed.json", folder / "samples" / "sandbox-seed.json")
    (folder / "loader.yaml").write_text("", encoding="utf-8")
    assert main(["init", "curriculum.xlsx"]) == EXIT_OK
    assert "loader project" not in capsys.readouterr().err
    assert main(["plan", "mappings/curriculum.yaml", "--detailed-exitcode"]) == EXIT_CHANGES
    captured = capsys.readouterr()
    summary = next(line for line in captured.out.splitlines() if line.startswith("Plan: "))
    assert "unchanged" not in summary and "dropped" not in summary, captured.out  # nothing live: all creates
    assert "a project's sandbox starts with no records" in captured.err


def test_a_seed_loader_yaml_names_is_still_used(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_samples(folder)
    (folder / "loader.yaml").write_text("sandbox: {seed: samples/sandbox-seed.json}\n", encoding="utf-8")
    assert main(["plan", "mappings/curriculum.yaml"]) == EXIT_OK
    captured = capsys.readouterr()
    assert "empty" not in captured.err and "unchanged" in captured.out
