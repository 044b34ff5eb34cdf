"""Each file of a history (its head, a snapshot file, a journal an apply left), damaged or replaced
in every way a checkout can damage it, is refused with a `HistoryError` naming the file and the
repair: never read through a symbolic link, never waited on (a FIFO), never read without end
(`/dev/zero`), never an internal error, never read as less history than it is.
(The command line's side of it, exit 1 and `loader history reset` repairing it: test_history_damaged.)"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from loader.history.errors import HistoryError
from loader.history.files import MAX_LINE_BYTES
from loader.history.journal import FieldWrite
from loader.history.lines import Owner
from loader.history.store import History

OWNER = Owner("schools.yaml", "schools")
Damage = Callable[[Path, Path], None]  # (the file, a folder outside the history) -> None


def _history(folder: Path) -> None:
    """A history of one finished apply that created schools K0-K2, and a journal of a second one,
    killed after it updated K1 (left to fold)."""
    history = History.open(folder)
    writer = history.begin_apply("test", plan_digest=None, by="test")
    for i in range(3):
        writer.record("create", "school", (f"K{i}",), f"id-{i}", [FieldWrite("name", OWNER, after=f"School {i}")],
                      updated=(1000 + i, "svc"))
    history.finish_apply(writer)
    writer = History.open(folder).begin_apply("test", plan_digest=None, by="test")
    writer.record("update", "school", ("K1",), "id-1", [FieldWrite("name", OWNER, after="New", before="School 1")],
                  updated=(2000, "svc"))
    writer.record("update", "school", ("K2",), "id-2", [FieldWrite("name", OWNER, after="Two", before="School 2")],
                  updated=(2001, "svc"))
    writer.close()  # killed: no end line, its journal still open


def _file(folder: Path, which: str) -> Path:
    if which == "head":
        return folder / "head.json"
    if which == "snapshot":
        (path,) = (folder / "snapshot").glob("school*.tsv")
        return path
    (path,) = (folder / "journal").glob("*.open.jsonl")
    return path


def _edit(old: bytes, new: bytes) -> Damage:
    def damage(path: Path, _outside: Path) -> None:
        data = path.read_bytes()
        assert old in data, (old, data)
        path.write_bytes(data.replace(old, new, 1))
    return damage


def _folder(path: Path, _outside: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "x").write_text("x")


def _fifo(path: Path, _outside: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _to_dev_zero(path: Path, _outside: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


def _to_outside(path: Path, outside: Path) -> None:
    copy = outside / path.name
    copy.write_bytes(path.read_bytes())  # the same bytes, but outside the project
    path.unlink()
    path.symlink_to(copy)


def _not_utf8(path: Path, _outside: Path) -> None:
    data = path.read_bytes()
    at = data.index(b"lineage" if path.name == "head.json" else b"K1")
    path.write_bytes(data[:at] + b"\xff\xfe" + data[at + 2:])


def _outsized(path: Path, _outside: Path) -> None:
    path.write_bytes(path.read_bytes().rstrip(b"\n") + b" " * (2 * 1024 * 1024) + b"\n")


def _truncated(path: Path, _outside: Path) -> None:
    path.write_bytes(path.read_bytes()[:40])


FILE_KINDS: dict[str, Damage] = {"folder": _folder, "FIFO": _fifo, "symlink to /dev/zero": _to_dev_zero,
                                 "symlink outside": _to_outside, "not UTF-8": _not_utf8}
CASES: list[tuple[str, str, Damage]] = [
    *[(which, name, damage) for which in ("head", "snapshot", "journal") for name, damage in FILE_KINDS.items()],
    ("head", "edited: serial not a number", _edit(b'"serial": 1', b'"serial": "one"')),
    ("head", "edited: serial infinite", _edit(b'"serial": 1', b'"serial": Infinity')),
    ("head", "key missing: lineage", _edit(b'"lineage"', b'"lineages"')),
    ("head", "edited: a list", _edit(b"{", b"[{", )),
    ("head", "truncated", _truncated),
    ("head", "outsized", _outsized),
    ("snapshot", "edited: a line with no columns", _edit(b'["K1"]\t', b'["K1"] ')),
    ("snapshot", "edited: an owner that is not in the table", _edit(b"\t0.", b"\t7.")),
    ("snapshot", "edited: a time that is not a number", _edit(b"\t1000\t", b"\tsoon\t")),
    ("snapshot", "edited: a table row", _edit(b'#owner\t["', b'#owner\t{"')),
    ("snapshot", "key missing: the magic line", _edit(b"#loader-history-snapshot 2", b"#snapshot")),
    ("journal", "key missing: kind", _edit(b'"kind":"update",', b"")),
    ("journal", "edited: a line that is not JSON", _edit(b'"entity"', b'"entity"=')),
    ("journal", "edited: fields a list", _edit(b'"fields":{', b'"fields":[{')),
    ("journal", "edited: an unknown kind", _edit(b'"kind":"update"', b'"kind":"delete"')),
    ("journal", "outsized line", _edit(b'"fields":{', b'"fields":{' + b" " * (MAX_LINE_BYTES + 1))),
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("which", "case", "damage"), CASES, ids=[f"{w}-{c}" for w, c, _ in CASES])
def test_a_damaged_history_file_is_refused_naming_it_and_the_repair(tmp_path: Path, which: str, case: str,
                                                                    damage: Damage) -> None:
    folder, outside = tmp_path / "history", tmp_path / "outside"
    outside.mkdir()
    _history(folder)
    path = _file(folder, which)
    damage(path, outside)
    with pytest.raises(HistoryError) as raised:
        history = History.open(folder)
        for entity in history.snapshot.entities():  # the lines a plan would read
            list(history.snapshot.lines(entity))
            history.snapshot.key_for_id(entity, "")
    error = raised.value
    assert error.where is not None and Path(str(error.where)) in (path, path.parent), (error.where, path)
    assert "loader history reset" in (error.hint or ""), str(error)


@pytest.mark.timeout(60)
def test_a_head_of_a_later_format_is_refused_as_written_by_a_newer_loader(tmp_path: Path) -> None:
    _history(tmp_path)
    _edit(b'"format": 3', b'"format": 4')(tmp_path / "head.json", tmp_path)
    with pytest.raises(HistoryError) as raised:
        History.open(tmp_path)
    assert "written by a newer loader" in str(raised.value) and "upgrade the loader" in (raised.value.hint or "")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("part", ["snapshot", "journal"])
def test_a_history_folder_that_is_a_symlink_is_never_written_through(tmp_path: Path, part: str) -> None:
    folder, outside = tmp_path / "history", tmp_path / "outside"
    _history(folder)
    (folder / part).rename(outside)
    (folder / part).symlink_to(outside)
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    with pytest.raises(HistoryError) as raised:
        History.open(folder)
    assert raised.value.where == str(folder / part) and "symbolic link" in str(raised.value)
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["head.json", "snapshot/school.tsv"])
def test_a_planted_tmp_file_or_link_is_replaced_never_written_through(tmp_path: Path, name: str) -> None:
    folder, target = tmp_path / "history", tmp_path / "outside.txt"
    _history(folder)
    target.write_text("not the history's")
    (folder / f"{name}.tmp").symlink_to(target)  # the temporary name a write once used
    history = History.open(folder)  # folds the leftover journal: writes the snapshot and the head
    assert history.snapshot.count("school") == 3 and history.line("school", ("K1",)) is not None
    assert target.read_text() == "not the history's"
    (folder / name).unlink()
    (folder / name).symlink_to(target)  # a link where the file belongs is replaced, not followed
    writer = history.begin_apply("test", plan_digest=None, by="test")
    writer.record("update", "school", ("K0",), "id-0", [FieldWrite("name", OWNER, after="Zero")], updated=(3000, "s"))
    history.finish_apply(writer)
    assert target.read_text() == "not the history's" and not (folder / name).is_symlink()


def test_a_journal_cut_off_in_its_last_line_is_a_killed_apply_not_damage(tmp_path: Path) -> None:
    _history(tmp_path)
    path = _file(tmp_path, "journal")
    path.write_bytes(path.read_bytes()[:-30])  # the second update torn: the first stays
    history = History.open(tmp_path)
    line = history.line("school", ("K1",))
    assert line is not None and line.updated_time == 2000
    untouched = history.line("school", ("K2",))
    assert untouched is not None and untouched.updated_time == 1002


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", ["FIFO", "symlink to /dev/zero", "folder"])
def test_a_finished_journal_replaced_is_refused(tmp_path: Path, case: str) -> None:
    _history(tmp_path)
    History.open(tmp_path)  # the leftover folded: two finished journals
    path = sorted((tmp_path / "journal").glob("*.jsonl"))[-1]
    FILE_KINDS[case](path, tmp_path)
    with pytest.raises(HistoryError) as raised:
        History.open(tmp_path)
    assert raised.value.where == str(path) and "loader history reset" in (raised.value.hint or "")
