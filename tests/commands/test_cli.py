"""The command line's boundary: usage errors, user errors and bugs each end in their own way."""

from __future__ import annotations

import stat
import tempfile
from pathlib import Path

import pytest

from loader import cli
from loader.commands import validate


def test_usage_errors_exit_64_with_a_hint(capsys):
    assert cli.main(["plan", "m.yaml", "--no-such-option"]) == 64
    err = capsys.readouterr().err
    assert "unrecognized arguments" in err and "--help" in err


def test_no_command_prints_help_and_exits_64(capsys):
    assert cli.main([]) == 64
    assert "COMMAND" in capsys.readouterr().err


def test_bad_input_is_an_error_message_not_a_traceback(tmp_path, capsys):
    assert cli.main(["validate", str(tmp_path / "missing.yaml")]) == 1
    err = capsys.readouterr().err
    assert "missing.yaml" in err and "Traceback" not in err


def test_a_bug_exits_3_and_leaves_its_traceback_in_a_private_file(monkeypatch, capsys):
    # The only stand-in in the suite: no input makes loader fail unexpectedly on purpose.
    def broken(args: object) -> int:
        raise RuntimeError("cell value 'Jane Citizen' in an exception text")

    monkeypatch.setattr(validate, "run", broken)
    before = set(Path(tempfile.gettempdir()).glob("loader-crash-*.log"))
    assert cli.main(["validate", "x.yaml"]) == 3
    err = capsys.readouterr().err
    assert "This is a bug in loader" in err and "Traceback" not in err and "Jane" not in err
    [log] = set(Path(tempfile.gettempdir()).glob("loader-crash-*.log")) - before
    try:
        assert "RuntimeError" in log.read_text(encoding="utf-8")
        assert stat.S_IMODE(log.stat().st_mode) == 0o600
    finally:
        log.unlink()


@pytest.mark.parametrize("argv", [["--version"], ["plan", "--help"]])
def test_version_and_help_exit_0(argv, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(argv)
    assert done.value.code == 0
