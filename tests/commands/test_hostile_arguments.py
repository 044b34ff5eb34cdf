"""Absurd and hostile command-line arguments: usage errors (64) naming the option, never an
internal error; what is echoed is cut; control characters from names, keys and arguments never
reach the terminal raw (escaped at the one place that prints errors)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.probe import run_loader

from loader.cli import main
from loader.console import ECHO_LIMIT, shown

HUGE = "9" * 100_000
ABSURD = {
    "--max-changes of 100,000 digits": ["apply", "m.yaml", "--max-changes", HUGE],
    "--max-changes of 100,000 digits %": ["apply", "m.yaml", f"--max-changes={HUGE}%"],
    "--max-changes of 21 digits": ["apply", "m.yaml", "--max-changes", "9" * 21],
    "a 100 KB --out": ["plan", "m.yaml", "--out", "x" * 100_000 + ".json"],
    "a 300-byte --out name": ["plan", "m.yaml", "--out", "x" * 300 + ".json"],
    "a 100 KB --out of pull": ["pull", "--out", "x" * 100_000 + ".xlsx"],
    "a 5,000-character path": ["validate", ("d" * 200 + "/") * 25 + "m.yaml"],
    "a 100 KB unknown option": ["plan", "--bogus" + "A" * 100_000],
    "a 100 KB --key": ["history", "--entity", "school", "--key", "code=" + "k" * 100_000],
    "a non-UTF-8 --key": ["history", "--entity", "school", "--key", os.fsdecode(b"\xff\xfe")],
}


@pytest.mark.parametrize("args", ABSURD.values(), ids=list(ABSURD))
def test_an_absurd_argument_is_a_usage_error_with_a_short_message(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(args) == 64
    err = capsys.readouterr().err
    assert err.startswith("loader: error: ") and len(err) < 1000, err[:2000]
    assert "\udcff" not in err and "\udcfe" not in err


HOSTILE_NAMES = {
    "clear screen (CSI)": "\x1b[2J\x1b[Hsafe.yaml",
    "bell": "ring\x07.yaml",
    "carriage return": "x.yaml\rloader: all good",
    "forged line": "x.yaml\nloader: ok: nothing to do",
    "bidi override": "\u202egnp.yaml",
    "C1 CSI": "\x9b31mred.yaml",
}


@pytest.mark.parametrize("name", HOSTILE_NAMES.values(), ids=list(HOSTILE_NAMES))
def test_control_characters_in_a_name_never_reach_the_terminal_raw(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["validate", name]) == 1
    err = capsys.readouterr().err
    assert err.startswith("loader: error: ")
    assert not any(c in err for c in "\x1b\x07\r\x9b\u202e")
    assert all(not line.startswith("loader:") for line in err.splitlines()[1:])  # no forged line


def test_control_characters_in_names_init_reports_never_reach_the_terminal_raw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    name = "\x1b[2J\u202eschools\r.csv"
    (tmp_path / name).write_bytes("Code,Name\nSCI,“Science”\n".encode("cp1252"))
    assert main(["init", name, "--entity", "school", "--out", "\x1b[31mout\x07.yaml"]) in (0, 1)
    said = capsys.readouterr()
    assert "wrote \\e[31mout\\u0007.yaml" in said.out
    assert not any(c in said.out + said.err for c in "\x1b\x07\r\u202e")


def test_shown_keeps_its_own_layout_and_cuts_long_runs() -> None:
    message = "cannot read:\n  " + "a" * 5000 + "\n  hint: x\x1b[2J"
    text = shown(message)
    lines = text.split("\n")
    assert lines[0] == "cannot read:" and lines[2] == "  hint: x\\e[2J"
    assert lines[1] == "  " + "a" * ECHO_LIMIT + "…"


def test_the_installed_command_gives_64_for_100000_digits_within_the_bounds(tmp_path: Path) -> None:
    result = run_loader(["apply", "m.yaml", "--max-changes", HUGE], tmp_path)
    result.assert_refused_cleanly(exit_code=64)
    assert len(result.stderr) < 1000
