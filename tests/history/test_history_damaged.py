"""A damaged history is refused with a clear error naming the file and the repair, never read as
less history than it is (a record whose line is lost would be compared two-way, its platform edits
overwritten without a note): a head deleted, one record's snapshot line deleted in a bad merge, a
snapshot cut off mid-line. `loader history reset` still clears such a history."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fault_project import fault_project

from loader.history.errors import HistoryError
from loader.history.journal import FieldWrite
from loader.history.lines import Owner
from loader.history.store import History

OWNER = Owner("schools.yaml", "schools")


def _history(folder: Path, codes: range = range(3)) -> Path:
    """A history of one apply that created schools K0… in `folder`; its snapshot file."""
    history = History.open(folder)
    writer = history.begin_apply("test", plan_digest=None, by="test")
    for i in codes:
        writer.record("create", "school", (f"K{i}",), f"id-{i}", [FieldWrite("name", OWNER, after=f"School {i}")],
                      updated=(1000 + i, "svc"))
    history.finish_apply(writer)
    (snapshot,) = (folder / "snapshot").glob("school*.tsv")
    return snapshot


def _refused(folder: Path) -> HistoryError:
    with pytest.raises(HistoryError) as raised:
        History.open(folder)
    hint = raised.value.hint or ""
    assert "git checkout" in hint and "loader history reset" in hint and "loader history baseline" in hint
    return raised.value


def test_a_history_whose_head_was_deleted_is_refused(tmp_path: Path) -> None:
    _history(tmp_path)
    (tmp_path / "head.json").unlink()
    error = _refused(tmp_path)
    assert error.where == str(tmp_path / "head.json") and "no head.json" in str(error)


def test_a_snapshot_that_lost_a_line_in_a_bad_merge_is_refused(tmp_path: Path) -> None:
    snapshot = _history(tmp_path)
    lines = snapshot.read_text(encoding="utf-8").splitlines(keepends=True)
    snapshot.write_text("".join(line for line in lines if not line.startswith('["K1"]')), encoding="utf-8")
    error = _refused(tmp_path)
    assert error.where == str(snapshot) and "2 school line(s), head.json counted 3" in str(error)


def test_a_snapshot_with_a_line_added_by_hand_is_refused(tmp_path: Path) -> None:
    snapshot = _history(tmp_path)
    text = snapshot.read_text(encoding="utf-8")
    last = text.splitlines()[-1]
    snapshot.write_text(text + last.replace('["K2"]', '["K9"]') + "\n", encoding="utf-8")
    assert "4 school line(s), head.json counted 3" in str(_refused(tmp_path))


@pytest.mark.parametrize("keep", [1, 5, -3])
def test_a_snapshot_cut_off_mid_line_is_refused(tmp_path: Path, keep: int) -> None:
    snapshot = _history(tmp_path)
    data = snapshot.read_bytes()
    last_line = data.rstrip(b"\n").rfind(b"\n") + 1
    snapshot.write_bytes(data[:last_line + keep] if keep > 0 else data[:keep])
    error = _refused(tmp_path)
    assert error.where == str(snapshot) and "middle of a line" in str(error)


def test_an_intact_history_and_one_killed_mid_fold_open(tmp_path: Path) -> None:
    snapshot = _history(tmp_path)
    History.open(tmp_path)
    # Killed after its snapshot was written, before its head: its journal is still open, folded again.
    history = History.open(tmp_path)
    writer = history.begin_apply("test", plan_digest=None, by="test")
    writer.record("create", "school", ("K7",), "id-7", [FieldWrite("name", OWNER, after="School 7")],
                  updated=(2000, "svc"))
    writer.close()
    text = snapshot.read_text(encoding="utf-8")
    snapshot.write_text(text + text.splitlines()[-1].replace('["K2"]', '["K7"]') + "\n", encoding="utf-8")
    reopened = History.open(tmp_path)
    assert reopened.line("school", ("K7",)) is not None
    assert History.open(tmp_path).snapshot.count("school") == 4


def test_the_command_line_refuses_with_exit_1_and_reset_clears_it(tmp_path: Path) -> None:
    with fault_project(tmp_path) as project:
        project.sheet({"K0": ("School 0", "Arts"), "K1": ("School 1", "Arts")})
        assert project.apply()[0] == 0
        folder = tmp_path / "history" / "local"
        (snapshot,) = (folder / "snapshot").glob("school*.tsv")
        data = snapshot.read_bytes()
        snapshot.write_bytes(data[:data.rstrip(b"\n").rfind(b"\n") + 3])  # within the last line's key
        code, err = project.plan()
        assert code == 1, err
        assert str(snapshot) in err and "loader history reset" in err and "Traceback" not in err
        code, err = project.run("history", "reset", "--yes")
        assert code == 0, err
        code, err = project.plan()
        assert code == 0, err
