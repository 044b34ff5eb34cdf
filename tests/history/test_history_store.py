"""The history folder: applies journaled and folded, the head, keys, reset, and no person revealed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from loader.history.errors import AnotherDatabaseError, HistoryKeyError, another_database
from loader.history.journal import FieldWrite
from loader.history.journal_reading import read_journal
from loader.history.lines import Owner, line_digest
from loader.history.store import History, rekey
from loader.plan.three_way import is_another_database

OWNER = Owner("applicants.yaml", "applicants")
KEY = b"a long random history key for the tests"
UUID = "3f2b8c4e-1d2a-4b5c-9e8f-0a1b2c3d4e5f"


def _open(folder: Path, key: bytes | None = KEY) -> History:
    return History.open(folder, history_key=key, key_variable="LOADER_HISTORY_KEY", personal={"applicants"})


def test_an_apply_is_folded_into_the_snapshot_and_moves_the_head(tmp_path: Path) -> None:
    history = _open(tmp_path)
    writer = history.begin_apply("test", plan_digest="sha256:abc", by="ann")
    writer.record("create", "programs", ("P1",), UUID,
                  [FieldWrite("name", OWNER, after="Law"), FieldWrite("tags", OWNER, after=["b", "a"], as_set=True)],
                  updated=(1000, "svc-user"))
    writer.record("update", "programs", ("P2",), "id-2", [FieldWrite("name", OWNER, after="New", before="Old")])
    head = history.finish_apply(writer, {"skipped": 1})
    assert head.serial == 1 and head.last_apply == writer.info.apply_id and head.service_user_ids == ("svc-user",)
    reopened = _open(tmp_path)
    assert reopened.head == head
    line = reopened.line("programs", ("P1",))
    assert line is not None and line.updated_time == 1000 and line.updated_user == "svc-user"
    d = reopened.digester
    assert line.fields["name"].written == d.value("programs", ("P1",), "name", "Law")
    assert line.fields["tags"].written == d.elements("programs", ("P1",), "tags", ["a", "b"])
    assert reopened.line_by_id("programs", UUID) == line
    journal = reopened.journals()[0]
    assert journal.counts == {"create": 1, "update": 1, "skipped": 1}
    assert journal.entries[1].fields["name"].before == "Old"  # non-personal: the value before is kept
    assert journal.info.by == "ann" and journal.info.plan_digest == "sha256:abc"


def test_an_apply_that_writes_nothing_does_not_move_the_head(tmp_path: Path) -> None:
    history = _open(tmp_path)
    first = history.begin_apply("test", plan_digest=None, by=None)
    first.record("update", "programs", ("P1",), "id-1", [FieldWrite("name", OWNER, after="x")])
    head = history.finish_apply(first)
    before = (tmp_path / "head.json").read_bytes()
    empty = history.begin_apply("test", plan_digest=None, by=None)
    assert history.finish_apply(empty) == head
    assert (tmp_path / "head.json").read_bytes() == before and len(history.journals()) == 1
    assert not list((tmp_path / "journal").glob("*.open.jsonl"))


def test_nothing_is_written_before_the_first_write(tmp_path: Path) -> None:
    history = _open(tmp_path / "h")
    history.finish_apply(history.begin_apply("test", plan_digest=None, by=None))
    assert not (tmp_path / "h" / "head.json").exists()


def test_a_wrong_key_is_refused_with_its_fingerprint_and_a_missing_key_too(tmp_path: Path) -> None:
    history = _open(tmp_path)
    writer = history.begin_apply("test", plan_digest=None, by=None)
    writer.record("update", "programs", ("P1",), "id-1", [FieldWrite("name", OWNER, after="x")])
    head = history.finish_apply(writer)
    with pytest.raises(HistoryKeyError) as wrong:
        _open(tmp_path, b"another key")
    assert head.key_fingerprint and head.key_fingerprint in str(wrong.value)
    assert "LOADER_HISTORY_KEY" in str(wrong.value) and "loader history rekey" in str(wrong.value)
    with pytest.raises(HistoryKeyError, match="history key is needed"):
        _open(tmp_path, None)


def test_rekey_moves_the_history_to_a_new_key_and_keeps_every_digest(tmp_path: Path) -> None:
    history = _open(tmp_path)
    writer = history.begin_apply("test", plan_digest=None, by=None)
    writer.record("create", "applicants", ("ann@example.org",), UUID, [FieldWrite("email", OWNER, after="a@b")])
    history.finish_apply(writer)
    snapshot_before = {p.name: p.read_bytes() for p in (tmp_path / "snapshot").iterdir()}
    with pytest.raises(HistoryKeyError):
        rekey(tmp_path, b"not the key", b"new key")
    rekey(tmp_path, KEY, b"new key")
    with pytest.raises(HistoryKeyError):
        _open(tmp_path, KEY)
    moved = _open(tmp_path, b"new key")
    line = moved.line("applicants", ("ann@example.org",))
    assert line is not None and moved.line_by_id("applicants", UUID) == line
    assert line.fields["email"].written == moved.digester.value("applicants", ("ann@example.org",), "email", "a@b")
    assert {p.name: p.read_bytes() for p in (tmp_path / "snapshot").iterdir()} == snapshot_before


def test_reset_forgets_everything_and_starts_a_new_lineage(tmp_path: Path) -> None:
    history = _open(tmp_path)
    writer = history.begin_apply("test", plan_digest=None, by=None)
    writer.record("update", "programs", ("P1",), "id-1", [FieldWrite("name", OWNER, after="x")])
    head = history.finish_apply(writer)
    fresh = history.reset()
    assert fresh.snapshot.count() == 0 and not fresh.journals() and not fresh.started
    assert not (tmp_path / "head.json").exists() and fresh.head.lineage != head.lineage
    assert _open(tmp_path).line("programs", ("P1",)) is None


def test_a_lost_answer_is_journaled_but_moves_no_w(tmp_path: Path) -> None:
    history = _open(tmp_path)
    writer = history.begin_apply("test", plan_digest=None, by=None)
    writer.record("lost", "programs", ("P9",), None, [FieldWrite("name", OWNER, after="x")])
    head = history.finish_apply(writer)
    assert head.serial == 1 and history.line("programs", ("P9",)) is None
    assert [e.kind for e in history.journals()[0].entries] == ["lost"]


PERSON = {"first_name": "Zelda", "last_name": "Quennell-Obuya", "email": "zelda.quennell@example.org",
          "birth_date": "1999-07-14", "external_id": "EXT-7731-ZQ"}


def test_no_history_file_reveals_a_personal_value(tmp_path: Path) -> None:
    history = _open(tmp_path)
    key = (PERSON["external_id"],)
    writer = history.begin_apply("test", plan_digest=None, by=None)
    writer.record("create", "applicants", key, "applicant-id-1",
                  [FieldWrite(name, OWNER, after=value) for name, value in PERSON.items()], updated=(5, "svc"))
    writer.record("update", "applicants", key, "applicant-id-1",
                  [FieldWrite("email", OWNER, after="new@example.org", before=PERSON["email"]),
                   FieldWrite("nationalities", OWNER, after=["NZ", "Kiribati-XYZ"], before=["Atlantis-QQ"],
                              as_set=True)])
    history.finish_apply(writer)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) >= 3
    secrets = [*PERSON.values(), "new@example.org", "Kiribati-XYZ", "Atlantis-QQ", "applicant-id-1", "19990714",
               "Zelda", "Quennell"]
    for path in files:
        data = path.read_bytes()
        for secret in secrets:
            assert secret.encode() not in data, (path, secret)
            assert secret.lower().encode() not in data.lower(), (path, secret)
    assert history.line_by_id("applicants", "applicant-id-1") is not None


CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from loader.history.journal import FieldWrite
    from loader.history.lines import Owner
    from loader.history.store import History
    history = History.open(Path(sys.argv[1]))
    writer = history.begin_apply("test", plan_digest=None, by=None)
    owner = Owner("programs.yaml", "programs")
    for i in range(100000):
        writer.record("update", "programs", (f"P{i:06d}",), f"id-{i}", [FieldWrite("name", owner, after=f"v{i}")])
        print(i, flush=True)
""")


@pytest.mark.slow
def test_a_killed_apply_loses_no_write_it_had_journaled(tmp_path: Path) -> None:
    with subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path)], stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        done = -1
        deadline = time.monotonic() + 60
        while done < 300 and time.monotonic() < deadline:
            done = int(child.stdout.readline())
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert done >= 300
    [leftover] = (tmp_path / "journal").glob("*.open.jsonl")
    assert read_journal(leftover).counts is None
    history = History.open(tmp_path)  # the next command folds the leftover
    assert not list((tmp_path / "journal").glob("*.open.jsonl"))
    assert history.head.serial == 1
    for i in range(done + 1):  # every write the child had reported is in the snapshot
        line = history.line("programs", (f"P{i:06d}",))
        assert line is not None and line.live_id == f"=id-{i}"
        assert line.fields["name"].written == history.digester.value("programs", (f"P{i:06d}",), "name", f"v{i}")
    reread = History.open(tmp_path)
    assert reread.snapshot == history.snapshot and reread.head == history.head


def test_missing_ids_counts_recorded_ids_not_live(tmp_path: Path) -> None:
    history = _open(tmp_path)
    writer = history.begin_apply("test", plan_digest=None, by=None)
    for n in range(4):
        writer.record("create", "applicants", (f"A{n}",), f"id-{n}", [FieldWrite("email", OWNER, after="x")])
    history.finish_apply(writer)
    assert history.missing_ids("applicants", ["id-0", "id-1", "id-9"]) == (4, 2)
    assert history.missing_ids("programs", []) == (0, 0)


def test_a_line_digest_changes_when_an_apply_changes_the_line(tmp_path: Path) -> None:
    history = _open(tmp_path)
    assert line_digest(history.line("programs", ("P1",))) == "none"
    digests = []
    for value in ("x", "y", "y"):
        writer = history.begin_apply("test", plan_digest=None, by=None)
        writer.record("update", "programs", ("P1",), "id-1", [FieldWrite("name", OWNER, after=value)])
        history.finish_apply(writer)
        digests.append(line_digest(history.line("programs", ("P1",))))
    assert digests[0] != digests[1] == digests[2]


def test_a_history_of_another_database_is_refused_with_the_count_and_what_to_do(tmp_path: Path) -> None:
    history = _open(tmp_path)
    writer = history.begin_apply("test", plan_digest=None, by=None)
    for n in range(3):
        writer.record("create", "programs", (f"P{n}",), f"id-{n}", [FieldWrite("name", OWNER, after="x")])
    history.finish_apply(writer)
    assert not is_another_database(*history.missing_ids("programs", ["id-0", "id-1"]))
    recorded, missing = history.missing_ids("programs", ["id-0", "other"])
    assert is_another_database(recorded, missing)
    refused = another_database(missing, recorded, "programs", str(tmp_path))
    assert isinstance(refused, AnotherDatabaseError)
    assert "2 of 3 recorded programs ids" in str(refused) and "loader history reset" in str(refused)
