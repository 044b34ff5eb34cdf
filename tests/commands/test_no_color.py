"""`--no-color`, an option of every command: plan's and apply's terminal views and validate's
text carry colour with `FORCE_COLOR` (no terminal needed), none with `--no-color` or `NO_COLOR`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.project import SCHOOLS_SEED, schools_project

from loader.cli import COMMANDS, main
from loader.console import plain
from loader.errors import EXIT_CHANGES, EXIT_OK
from loader.sandbox.server import SandboxOptions, serve_in_thread

ESCAPE = "\x1b["


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    with serve_in_thread(SandboxOptions(seed=SCHOOLS_SEED)) as running:
        yield schools_project(tmp_path, running, monkeypatch)


def _out(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().out


def test_plan_and_apply_are_coloured_as_forced_and_plain_with_no_color(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = ["plan", "schools.yaml", "--env", "local", "--detailed-exitcode"]
    assert main(plan) == EXIT_CHANGES
    assert ESCAPE in _out(capsys)
    assert main([*plan, "--no-color"]) == EXIT_CHANGES
    out = _out(capsys)
    assert ESCAPE not in out and "+ create LAW" in out
    assert main(["apply", "schools.yaml", "--env", "local", "--yes", "--no-color"]) == EXIT_OK
    out = _out(capsys)
    assert ESCAPE not in out and "LAW" in out
    assert not plain()  # the choice ends with the command
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["validate", "schools.yaml"]) == EXIT_OK
    assert ESCAPE not in _out(capsys)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_takes_no_color(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--no-color" in _out(capsys)
