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


def _crash_logs() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("loader-crash-*/traceback.log"))


def test_a_bug_exits_3_and_leaves_its_traceback_in_a_private_file(monkeypatch, capsys):
    # The only stand-in in the suite: no input makes loader fail unexpectedly on purpose.
    def broken(*_: object) -> int:  # run(request, config)
        raise RuntimeError("cell value 'Jane Citizen' in an exception text")

    monkeypatch.setattr(validate, "run", broken)
    before = _crash_logs()
    assert cli.main(["validate", "x.yaml"]) == 3
    err = capsys.readouterr().err
    assert "This is a bug in loader" in err and "Traceback" not in err and "Jane" not in err
    [log] = _crash_logs() - before
    try:
        assert str(log) in err
        assert "RuntimeError" in log.read_text(encoding="utf-8")
        assert stat.S_IMODE(log.stat().st_mode) == 0o600
        assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    finally:
        log.unlink()
        log.parent.rmdir()


def test_a_crash_log_never_follows_a_planted_symlink_nor_lands_at_a_guessable_name(monkeypatch, tmp_path):
    # Someone sharing /tmp plants symlinks at every name the old scheme used (loader-crash-<second>.log).
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    for at_second in range(60):
        (tmp_path / f"loader-crash-{at_second:02d}.log").symlink_to(victim)
    first = cli.write_crash_log(RuntimeError("one"))
    second = cli.write_crash_log(RuntimeError("two"))
    assert victim.read_text(encoding="utf-8") == "precious"
    assert first != second and first.parent != second.parent  # a fresh unguessable folder each time
    for log in (first, second):
        assert log.parent.parent == tmp_path and not log.is_symlink()
        assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700


def test_a_crash_log_holds_no_known_secret(monkeypatch, tmp_path):
    from loader.config import Secret

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    secret = Secret("crash-secret-value-42")
    log = cli.write_crash_log(RuntimeError(f"echoed: client_id=x&client_secret={secret.reveal()} Bearer abc.def"))
    text = log.read_text(encoding="utf-8")
    assert "crash-secret-value-42" not in text and "abc.def" not in text and "RuntimeError" in text


@pytest.mark.parametrize("argv", [["--version"], ["plan", "--help"]])
def test_version_and_help_exit_0(argv, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(argv)
    assert done.value.code == 0
