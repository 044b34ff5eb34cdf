"""Progress bars: a bar with a known total ends full, a counter ends at what it counted; apply's bars
per block show on a terminal only; the yes/no question."""

from __future__ import annotations

import io
import sys

import pytest

from loader.console import ask_yes, block_progress, progress_bars


def test_a_bar_with_a_total_ends_full_and_a_counter_ends_at_its_count(capsys: pytest.CaptureFixture[str]) -> None:
    with progress_bars(enabled=True) as bars:
        reading = bars.add("reading 2 mapping file(s) and their sheets", total=2)
        reading.advance(2)
        reading.done()
        fetching = bars.add("fetching school records")
        fetching.advance(3)
        fetching.done()
        quiet = bars.add("reading 1 mapping file(s)", total=1)
        quiet.done()  # done without advancing: still full, never 0/0
        assert reading.counts == (2, 2)  # type: ignore[attr-defined]
        assert fetching.counts == (3, 3)  # type: ignore[attr-defined]
        assert quiet.counts == (1, 1)  # type: ignore[attr-defined]
    capsys.readouterr()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_block_progress_draws_a_bar_per_block_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    with block_progress({"schools": 2, "courses": 1}) as advance:
        assert advance is None
    screen = _Terminal()
    monkeypatch.setattr(sys, "stdout", screen)
    with block_progress({"schools": 2, "courses": 1}) as advance:
        assert advance is not None
        for block in ("schools", "schools", "courses", "not-a-block"):
            advance(block)
    shown = screen.getvalue()
    assert "schools" in shown and "courses" in shown and "2/2" in shown and "1/1" in shown and "/s" in shown


def test_block_progress_can_be_turned_off_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _Terminal()
    monkeypatch.setattr(sys, "stdout", screen)
    with block_progress({"schools": 2}, enabled=False) as advance:
        assert advance is None
    assert screen.getvalue() == ""


def test_ask_yes_asks_on_stderr_and_takes_only_yes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", _Terminal("Yes\nn\n"))
    assert ask_yes("Apply 3 changes to sandbox?") is True
    assert ask_yes("Apply 3 changes to sandbox?") is False
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("Apply 3 changes to sandbox? [y/N] ") == 2


def test_ask_yes_does_not_ask_when_stdin_is_not_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("yes\n"))
    assert ask_yes("Apply?") is None
    assert capsys.readouterr().err == ""
