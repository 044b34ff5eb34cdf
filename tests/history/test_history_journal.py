"""The journal: what an entry keeps, a torn last line, and folding into a snapshot."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from loader.history.digests import Digester
from loader.history.journal import ApplyInfo, FieldWrite, JournalWriter
from loader.history.journal_fold import fold
from loader.history.journal_reading import read_journal
from loader.history.lines import FieldMark, HistoryLine, Owner
from loader.history.snapshot import Snapshot

OWNER = Owner("m.yaml", "b")
INFO = ApplyInfo("20260101T000000Z-abc", "2026-01-01T00:00:00+00:00", "test", "sha256:1", "ann")
DIGESTER = Digester(frozenset({"applicants"}), b"k" * 32)


def test_personal_entities_keep_digests_and_others_the_value_before(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path / "j.open.jsonl", INFO, DIGESTER)
    writer.record("update", "applicants", ("A1",), "id-1", [FieldWrite("email", OWNER, after="n@x", before="o@x")])
    writer.record("update", "programs", ("P1",), "id-2", [FieldWrite("name", OWNER, after="New", before="Old")])
    writer.finish()
    journal = read_journal(tmp_path / "j.open.jsonl")
    personal, plain = journal.entries
    assert personal.fields["email"].before == DIGESTER.value("applicants", ("A1",), "email", "o@x")
    assert personal.key == DIGESTER.key_token("applicants", ("A1",)) and personal.live_id != "id-1"
    assert plain.fields["name"].before == "Old" and plain.key == '["P1"]'
    assert journal.info == INFO and journal.counts == {"update": 2}


def test_a_torn_last_line_is_skipped_and_the_journal_reads_as_unfinished(tmp_path: Path) -> None:
    path = tmp_path / "j.open.jsonl"
    writer = JournalWriter(path, INFO, DIGESTER)
    writer.record("create", "programs", ("P1",), "id-1", [FieldWrite("name", OWNER, after="x")])
    writer.close()
    with open(path, "ab") as out:
        out.write(b'{"kind":"update","entity":"progr')
    journal = read_journal(path)
    assert [e.kind for e in journal.entries] == ["create"] and journal.counts is None


def test_an_unknown_kind_is_refused(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path / "j.open.jsonl", INFO, DIGESTER)
    with pytest.raises(ValueError, match="kind"):
        writer.record("delete", "programs", ("P1",), "id-1")
    writer.close()


def test_fold_sets_marks_over_the_line_and_keeps_fields_not_written(tmp_path: Path) -> None:
    old = HistoryLine('["P1"]', "=id-1", 5, "svc", {"name": FieldMark(OWNER, "N" * 12),
                                                   "code": FieldMark(OWNER, "C" * 12)})
    snapshot = Snapshot().with_lines("programs", [old])
    writer = JournalWriter(tmp_path / "j.open.jsonl", INFO, DIGESTER)
    writer.record("update", "programs", ("P1",), "id-1", [FieldWrite("name", OWNER, after="x")], updated=(9, "svc"))
    writer.record("confirm", "programs", ("P2",), "id-2", [FieldWrite("name", OWNER, after="y")])
    writer.record("lost", "programs", ("P3",), None, [FieldWrite("name", OWNER, after="z")])
    writer.finish()
    folded = fold(snapshot, read_journal(tmp_path / "j.open.jsonl").entries)
    line = folded.get("programs", '["P1"]')
    assert line is not None and line.updated_time == 9 and line.fields["code"] == old.fields["code"]
    assert line.fields["name"].written == DIGESTER.value("programs", ("P1",), "name", "x")
    assert folded.get("programs", '["P2"]') is not None and folded.get("programs", '["P3"]') is None
    assert snapshot.get("programs", '["P1"]') == old  # a snapshot is a value: fold made a new one


def test_a_write_keeps_the_value_after_for_plain_entities_only(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path / "j.open.jsonl", INFO, DIGESTER)
    writer.record("update", "applicants", ("A1",), "id-1", [FieldWrite("email", OWNER, after="n@x", before="o@x")])
    writer.record("update", "programs", ("P1",), "id-2", [FieldWrite("name", OWNER, after="New", before="Old"),
                                                          FieldWrite("note", OWNER, after=None, before="x")])
    writer.record("confirm", "programs", ("P2",), "id-3", [FieldWrite("name", OWNER, written="W" * 12)])
    writer.finish()
    text = (tmp_path / "j.open.jsonl").read_text(encoding="utf-8")
    assert "n@x" not in text and '"journal":3' in text
    personal, plain, confirmed = read_journal(tmp_path / "j.open.jsonl").entries
    assert not personal.fields["email"].has_after
    assert (plain.fields["name"].after, plain.fields["name"].has_after) == ("New", True)
    assert (plain.fields["note"].after, plain.fields["note"].has_after) == (None, True)
    assert not confirmed.fields["name"].has_after  # the apply had no value: none is claimed


def test_a_renumbering_moves_the_line_and_keeps_the_old_key_as_former(tmp_path: Path) -> None:
    old = HistoryLine('["MATH201"]', "=id-1", 5, "svc", {"name": FieldMark(OWNER, "N" * 12)})
    snapshot = Snapshot().with_lines("units", [old])
    writer = JournalWriter(tmp_path / "j.open.jsonl", INFO, DIGESTER, base=snapshot)
    writer.record("update", "units", ("MATH2001",), "id-1", [FieldWrite("code", OWNER, after="MATH2001",
                                                                       before="MATH201")], formerly=("MATH201",))
    writer.finish()
    entries = read_journal(tmp_path / "j.open.jsonl").entries
    assert entries[0].formerly == '["MATH201"]'
    moved = fold(snapshot, entries)
    assert moved.get("units", '["MATH201"]') is None
    line = moved.get("units", '["MATH2001"]')
    assert line is not None and line.former_keys == ('["MATH201"]',) and set(line.fields) == {"name", "code"}
    back = fold(moved, [replace(entries[0], key='["MATH201"]', formerly='["MATH2001"]')])
    reverted = back.get("units", '["MATH201"]')
    assert reverted is not None and reverted.former_keys == ('["MATH2001"]',)


def test_the_first_platform_change_is_noted_once_and_cleared_when_the_loader_writes(tmp_path: Path) -> None:
    old = HistoryLine('["P1"]', "=id-1", 5, "svc", {"name": FieldMark(OWNER, "N" * 12)})
    snapshot = Snapshot().with_lines("programs", [old])
    writer = JournalWriter(tmp_path / "j.open.jsonl", INFO, DIGESTER, base=snapshot)
    writer.edited("programs", ("P1",), "id-1", {"name": (100, "robin"), "code": (100, "robin")})
    writer.edited("programs", ("P1",), "id-1", {"name": (200, "sam")})
    writer.finish()
    noted = fold(snapshot, read_journal(tmp_path / "j.open.jsonl").entries)
    line = noted.get("programs", '["P1"]')
    assert line is not None and line.fields["name"].edited == (100, "robin") and "code" not in line.fields
    writer = JournalWriter(tmp_path / "k.open.jsonl", INFO, DIGESTER, base=noted)
    writer.record("update", "programs", ("P1",), "id-1", [FieldWrite("name", OWNER, after="back")])
    writer.finish()
    line = fold(noted, read_journal(tmp_path / "k.open.jsonl").entries).get("programs", '["P1"]')
    assert line is not None and line.fields["name"].edited is None
