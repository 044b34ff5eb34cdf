"""A damaged history is refused with a clear error naming the file and the repair, never read as
less history than it is (a record whose line is lost would be compared two-way, its platform edits
overwritten without a note): a head deleted, one record's snapshot line deleted in a bad merge, a
snapshot cut off mid-line. `loader history reset` still clears such a history."""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Callable
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
    assert error.where == str(snapshot) and "2 school lines, head.json counted 3" in str(error)


def test_a_snapshot_with_a_line_added_by_hand_is_refused(tmp_path: Path) -> None:
    snapshot = _history(tmp_path)
    text = snapshot.read_text(encoding="utf-8")
    last = text.splitlines()[-1]
    snapshot.write_text(text + last.replace('["K2"]', '["K9"]') + "\n", encoding="utf-8")
    assert "4 school lines, head.json counted 3" in str(_refused(tmp_path))


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


def _replace(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert old in data, (old, data[:300])
    path.write_bytes(data.replace(old, new, 1))


def _kinds(outside: Path) -> dict[str, Callable[[Path], None]]:
    def folder(path: Path) -> None:
        path.unlink()
        path.mkdir()

    def fifo(path: Path) -> None:
        path.unlink()
        os.mkfifo(path)

    def dev_zero(path: Path) -> None:
        path.unlink()
        path.symlink_to("/dev/zero")

    def elsewhere(path: Path) -> None:
        (outside / path.name).write_bytes(path.read_bytes())
        path.unlink()
        path.symlink_to(outside / path.name)

    def not_utf8(path: Path) -> None:
        _replace(path, b"school" if path.suffix == ".tsv" else b"lineage" if path.name == "head.json" else b"apply",
                 b"\xff\xfe")

    return {"a folder": folder, "a FIFO": fifo, "a symlink to /dev/zero": dev_zero,
            "a symlink outside the project": elsewhere, "not UTF-8": not_utf8}


EDITS: list[tuple[str, str, bytes, bytes]] = [
    ("head", "a later format", b'"format": 3', b'"format": 4'),
    ("head", "key missing", b'"lineage"', b'"lineages"'),
    ("head", "a serial not a number", b'"serial": 1', b'"serial": Infinity'),
    ("snapshot", "a line with no columns", b'["K1"]\t', b'["K1"] '),
    ("snapshot", "an owner not in the table", b"\t0.", b"\t5."),
    ("journal", "key missing in the header", b'"apply":', b'"applied":'),
]


@pytest.mark.timeout(600)
def test_every_damaged_file_exits_1_naming_it_and_reset_repairs_it(tmp_path: Path) -> None:
    """`loader plan` on a head, a snapshot file or a journal replaced by a folder, a FIFO, a symbolic
    link, bytes that are not UTF-8, or edited by hand: exit 1 naming the file and the repair, never
    exit 3 or a hang; `loader history reset` removes each (never what a link points to)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    project_dir = tmp_path / "project"
    project_dir.mkdir()
    with fault_project(project_dir) as project:
        project.sheet({"K0": ("School 0", "Arts"), "K1": ("School 1", "Arts")})
        assert project.apply()[0] == 0
        folder = project_dir / "history" / "local"
        good = tmp_path / "good"
        shutil.copytree(folder, good)
        files = {"head": folder / "head.json", "snapshot": folder / "snapshot" / "school.tsv",
                 "journal": next((folder / "journal").glob("*.jsonl"))}
        cases = [(which, name, damage) for which in files for name, damage in _kinds(outside).items()]
        cases += [(which, name, functools.partial(_replace, old=old, new=new)) for which, name, old, new in EDITS]
        for number, (which, name, damage) in enumerate(cases):
            path = files[which]
            damage(path)
            code, err = project.plan()
            assert code == 1 and str(path) in err and "Traceback" not in err, (which, name, code, err)
            if "newer loader" not in err:
                assert "loader history reset" in err, (which, name, err)
            if number % 4 == 0:  # reset removes whatever is there, never what a link names
                kept = {p.name: p.read_bytes() for p in outside.iterdir()}
                assert project.run("history", "reset", "--yes")[0] == 0
                assert {p.name: p.read_bytes() for p in outside.iterdir()} == kept
                assert not any(folder.iterdir()) or not (folder / "head.json").exists()
            shutil.rmtree(folder)
            shutil.copytree(good, folder)
        assert project.plan()[0] == 0
