"""Two commands on one history at once: an apply still running keeps its journal (no other command
folds it as a leftover), a second apply is refused while the first writes, and an apply killed with
SIGKILL leaves no lock behind (its journal is folded by the next command)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from loader.history.errors import HistoryError
from loader.history.journal import FieldWrite, JournalWriter
from loader.history.lines import Owner
from loader.history.store import History

OWNER = Owner("schools.yaml", "schools")
UPDATED = (1_767_225_600_000, "loader-user")


def _record(writer: JournalWriter, code: str) -> None:
    writer.record("create", "school", (code,), f"id-{code}", [FieldWrite("name", OWNER, after=f"School {code}")],
                  updated=UPDATED)



def test_a_reset_while_an_apply_writes_is_refused_and_forgets_nothing(tmp_path: Path) -> None:
    first = History.open(tmp_path)
    writer = first.begin_apply("test", plan_digest=None, by="ann")
    _record(writer, "SCI")
    with pytest.raises(HistoryError, match="another apply is writing this history now"):
        History.open(tmp_path).reset()
    first.finish_apply(writer)
    assert History.open(tmp_path).line("school", ("SCI",)) is not None
    History.open(tmp_path).reset()  # once it has ended, the reset goes ahead
    assert History.open(tmp_path).line("school", ("SCI",)) is None

def test_a_running_apply_keeps_its_journal_and_a_second_apply_is_refused(tmp_path: Path) -> None:
    first = History.open(tmp_path)
    writer = first.begin_apply("test", plan_digest=None, by="ann")
    _record(writer, "SCI")
    other = History.open(tmp_path)  # another command meanwhile (a plan in another terminal)
    assert other.leftovers() == [] and other.interrupted == ()
    assert writer.path.exists()  # not folded, not renamed under the running apply
    with pytest.raises(HistoryError, match="another apply is writing this history now"):
        other.begin_apply("test", plan_digest=None, by="bob")
    first.finish_apply(writer)
    assert History.open(tmp_path).line("school", ("SCI",)) is not None
    second = History.open(tmp_path).begin_apply("test", plan_digest=None, by="bob")  # the first has ended
    second.close()


def test_an_apply_killed_mid_way_leaves_no_lock_and_its_journal_is_folded(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from loader.history.journal import FieldWrite
        from loader.history.lines import Owner
        from loader.history.store import History
        writer = History.open(Path({str(tmp_path)!r})).begin_apply("test", plan_digest=None, by="ann")
        writer.record("create", "school", ("LAW",), "id-LAW", [FieldWrite("name", Owner("schools.yaml", "schools"),
                      after="Law")], updated={UPDATED!r})
        print("written", flush=True)
        time.sleep(60)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "written"
        running = History.open(tmp_path)
        assert running.leftovers() == []  # another process's apply, still running
        with pytest.raises(HistoryError, match="another apply"):
            running.begin_apply("test", plan_digest=None, by="bob")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    after = History.open(tmp_path)  # the lock went with the process: a leftover, folded
    assert after.line("school", ("LAW",)) is not None and [i.apply_id for i in after.interrupted]
    after.begin_apply("test", plan_digest=None, by="bob").close()
