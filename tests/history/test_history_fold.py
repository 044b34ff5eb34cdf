"""Folding a journal as an apply finishes: only the records the journal touched are worked on, yet
the files are byte for byte those of folding the journal's entries and writing the whole snapshot
afresh (`journal_fold.fold` and `snapshot_files.write_snapshot`, the reference kept for this)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given, settings
from hypothesis import strategies as st

from loader.history.digests import Digester
from loader.history.journal import (
    ApplyInfo,
    FieldWrite,
    JournalEntry,
    JournalField,
    JournalWriter,
)
from loader.history.journal_fold import fold
from loader.history.journal_reading import read_journal, replay
from loader.history.journal_text import NO_VALUE, EntryText
from loader.history.lines import FieldMark, HistoryLine, Owner
from loader.history.merging import folded, write_entities
from loader.history.overlay import Overlay
from loader.history.snapshot import Snapshot
from loader.history.snapshot_files import read_snapshot, write_snapshot
from loader.history.store import History

ENTITIES = ("programs", "courses")
OWNERS = [Owner("programs.yaml", "programs"), Owner("extra.yaml", "more\ttabs"), Owner("ü.yaml", "b"),
          Owner("new.yaml", "a")]
USERS = ["svc", "staff", "ü", "zz-new", "a-new"]
FIELD_NAMES = ["code", "name", "tags", "custom_attributes.Campus", "aa-new", "zz-new"]
DIGEST = st.text("ABCDEFGHIJabcdef0123456789-_", min_size=12, max_size=12)
WRITTEN = st.one_of(DIGEST, st.frozensets(DIGEST, max_size=3))
KEYS = st.sampled_from([f'["K{n:02d}"]' for n in range(30)] + ['["ü"]', '["a\\tb"]'])
IDS = st.text("abc123=", min_size=1, max_size=6)
STAMPS = st.none() | st.tuples(st.integers(0, 2**45), st.none() | st.sampled_from(USERS))
EDITORS = ["0c627dbf-5685-4a5e-9d0e-3f1b2c4d5e6f", "staff", "with:colon@at"]
EDITED = st.tuples(st.integers(0, 2**45), st.none() | st.sampled_from(EDITORS))
MARKS = st.dictionaries(st.sampled_from(FIELD_NAMES), st.builds(FieldMark, st.sampled_from(OWNERS), WRITTEN),
                        max_size=4)
OLD_MARKS = st.dictionaries(st.sampled_from(FIELD_NAMES[:4]),
                            st.builds(FieldMark, st.sampled_from(OWNERS[:3]), WRITTEN, st.none() | EDITED), max_size=4)
LINES = st.builds(HistoryLine, KEYS, IDS, st.none() | st.integers(0, 2**45),
                  st.none() | st.sampled_from(USERS[:3]), OLD_MARKS, st.lists(KEYS, max_size=2, unique=True).map(tuple))
WRITE_ENTRIES = st.builds(
    lambda kind, entity, key, live_id, stamp, marks, formerly: JournalEntry(
        kind, entity, key, live_id, stamp, {n: JournalField(m.owner, m.written) for n, m in marks.items()},
        formerly if kind in ("update", "create") else None),
    st.sampled_from(["create", "update", "adopt", "lost", "confirm"]), st.sampled_from(ENTITIES), KEYS,
    st.none() | IDS, STAMPS, MARKS, st.none() | KEYS)
EDITED_ENTRIES = st.builds(
    lambda entity, key, live_id, edited: JournalEntry("edited", entity, key, live_id, edited=edited),
    st.sampled_from(ENTITIES), KEYS, IDS, st.dictionaries(st.sampled_from(FIELD_NAMES), EDITED, min_size=1, max_size=3))
RELEASE_ENTRIES = st.builds(lambda entity, key, owner: JournalEntry("release", entity, key, None, released=owner),
                            st.sampled_from(ENTITIES), KEYS, st.sampled_from(OWNERS))
ENTRIES = st.one_of(WRITE_ENTRIES, WRITE_ENTRIES, EDITED_ENTRIES, RELEASE_ENTRIES)


def _base(folder: Path, lines: dict[str, list[HistoryLine]], max_bytes: int) -> Snapshot:
    snapshot = Snapshot()
    for entity, entity_lines in lines.items():
        snapshot = snapshot.with_lines(entity, entity_lines)
    write_snapshot(folder, snapshot, max_bytes=max_bytes)
    return read_snapshot(folder)


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.tsv"))}


def _overlay(base: Snapshot, entries: list[JournalEntry]) -> Overlay:
    overlay = Overlay(base)
    for entry in entries:
        if entry.kind != "lost":
            overlay.add(entry.entity, entry.key, entry.live_id, entry.updated,
                        {name: (f.owner, f.written, None, None) for name, f in entry.fields.items()},
                        formerly=entry.formerly, edited=entry.edited, released=entry.released)
    return overlay


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(ENTITIES), st.lists(LINES, max_size=25), max_size=2),
       st.lists(ENTRIES, max_size=12), st.sampled_from([300, 2000, 50_000]),
       st.lists(LINES, max_size=3))
def test_folding_the_touched_records_writes_the_bytes_of_a_full_rebuild(
    lines: dict[str, list[HistoryLine]], entries: list[JournalEntry], max_bytes: int, parsed: list[HistoryLine],
) -> None:
    with TemporaryDirectory() as base_dir, TemporaryDirectory() as full_dir, TemporaryDirectory() as fast_dir:
        base = _base(Path(base_dir), lines, max_bytes)
        if parsed:  # some lines held parsed, as after `with_lines` (the slow way round)
            base = base.with_lines("programs", parsed)
            entries = [*entries, JournalEntry("confirm", "programs", parsed[0].key, None)]
        for folder in (full_dir, fast_dir):
            shutil.copytree(base_dir, folder, dirs_exist_ok=True)
        reference = fold(base, entries)
        write_snapshot(Path(full_dir), reference, max_bytes=max_bytes)
        snapshot, changed = folded(_overlay(base, entries))
        write_entities(Path(fast_dir), snapshot, changed, max_bytes=max_bytes)
        assert snapshot == reference
        full, fast = _files(Path(full_dir)), _files(Path(fast_dir))
        if parsed and "programs" not in changed:  # the parsed lines were never written in either
            full = {n: b for n, b in full.items() if not n.startswith("programs")}
            fast = {n: b for n, b in fast.items() if not n.startswith("programs")}
        assert fast == full
        assert read_snapshot(Path(fast_dir)) == reference


def test_a_fold_touching_few_records_of_a_large_snapshot_rewrites_only_what_changed(tmp_path: Path) -> None:
    owner = Owner("programs.yaml", "programs")
    lines = [HistoryLine(f'["P{n:05d}"]', f"=id-{n}", 1000 + n, "svc",
                         {"code": FieldMark(owner, f"{n:012d}"), "name": FieldMark(owner, f"N{n:011d}")})
             for n in range(3000)]
    base = _base(tmp_path / "fast", {"programs": lines, "courses": lines[:10]}, 40_000)
    shutil.copytree(tmp_path / "fast", tmp_path / "full")
    before = {path.name: path.stat().st_ino for path in (tmp_path / "fast").glob("*.tsv")}
    entries = [JournalEntry("update", "programs", f'["P{n:05d}"]', None, (9, "svc"),
                            {"name": JournalField(owner, "changed00000")}) for n in (2990, 2995)]
    snapshot, changed = folded(_overlay(base, entries))
    write_entities(tmp_path / "fast", snapshot, changed, max_bytes=40_000)
    write_snapshot(tmp_path / "full", fold(base, entries), max_bytes=40_000)
    assert changed == ["programs"] and _files(tmp_path / "fast") == _files(tmp_path / "full")
    after = {path.name: path.stat().st_ino for path in (tmp_path / "fast").glob("*.tsv")}
    kept = [name for name in before if after[name] == before[name]]
    assert len(before) > 4 and len(kept) == len(before) - 1, "only the last shard of programs is rewritten"


@settings(max_examples=60, deadline=None)
@given(st.lists(ENTRIES, max_size=10), st.dictionaries(st.sampled_from(ENTITIES), st.lists(LINES, max_size=8)))
def test_the_writer_keeps_what_replaying_its_journal_makes(entries: list[JournalEntry],
                                                         lines: dict[str, list[HistoryLine]]) -> None:
    info = ApplyInfo("20260101T000000000Z-abc", "2026-01-01T00:00:00+00:00", "test", None, "ann")
    with TemporaryDirectory() as folder:
        base = _base(Path(folder) / "snapshot", lines, 50_000)
        path = Path(folder) / "j.open.jsonl"
        writer = JournalWriter(path, info, Digester(), base=base)
        for entry in entries:
            writes = [FieldWrite(name, f.owner, written=f.written) for name, f in entry.fields.items()]
            key = tuple(json.loads(entry.key))
            if entry.kind == "edited":
                assert entry.live_id is not None
                writer.edited(entry.entity, key, entry.live_id, entry.edited)
                continue
            if entry.kind == "release":
                assert entry.released is not None
                writer.release(entry.entity, key, entry.released)
                continue
            formerly = None if entry.formerly is None else tuple(json.loads(entry.formerly))
            writer.record(entry.kind, entry.entity, key, entry.live_id, writes, updated=entry.updated,
                          formerly=formerly)
        writer.close()
        kept, replayed = writer.folding(), replay(path, base)
        assert folded(kept.overlay)[0] == folded(replayed.overlay)[0]
        assert (kept.entries, kept.wrote, kept.service_users) == (replayed.entries, replayed.wrote,
                                                                  replayed.service_users)
        assert folded(kept.overlay)[0] == fold(base, read_journal(path).entries)


VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                      max_leaves=6)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["create", "update"]), st.text(), st.text(), st.none() | st.text(),
       st.none() | st.tuples(st.integers(), st.none() | st.text()),
       st.dictionaries(st.text(), st.tuples(st.sampled_from(OWNERS), WRITTEN, VALUES, VALUES | st.just(NO_VALUE)),
                       max_size=3), st.booleans(), st.none() | st.text())
def test_a_journal_line_is_the_json_of_its_entry(
    kind: str, entity: str, key: str, live_id: str | None, updated: tuple[int, str | None] | None,
    marks: dict[str, tuple[Owner, object, object, object]], personal: bool, formerly: str | None,
) -> None:
    if personal:
        marks = {name: (owner, written, written, NO_VALUE) for name, (owner, written, _, _) in marks.items()}
    fields: dict[str, dict[str, object]] = {}
    block = marks[min(marks)][0] if marks else None  # the first field's owner: the entry's block
    for name, (owner, w, b, after) in marks.items():
        fields[name] = {"w": w if isinstance(w, str) else sorted(w)}  # type: ignore[call-overload]
        if personal or b is not None:
            fields[name]["before"] = (b if isinstance(b, str) else sorted(b)) if personal else b  # type: ignore[call-overload]
        if owner != block:
            fields[name]["owner"] = [owner.file, owner.block]
        if after is not NO_VALUE:
            fields[name]["after"] = after
    entry: dict[str, object] = {"kind": kind, "entity": entity, "key": key, "id": live_id, "fields": fields}
    if block is not None:
        entry["block"] = [block.file, block.block]
    if updated is not None:
        entry["updated"] = [updated[0], updated[1]]
    if formerly is not None:
        entry["formerly"] = formerly
    expected = json.dumps(entry, ensure_ascii=False, sort_keys=True, default=str, separators=(",", ":")) + "\n"
    line = EntryText().line(kind, entity, key, live_id, updated, marks, personal, formerly)  # type: ignore[arg-type]
    assert line == expected


def test_an_apply_over_a_history_folds_into_the_files_a_full_rebuild_writes(tmp_path: Path) -> None:
    owner, other = Owner("m.yaml", "b"), Owner("n.yaml", "c")
    history = History.open(tmp_path / "h")
    for round_ in range(3):
        writer = history.begin_apply("test", plan_digest=None, by=None)
        for n in range(50):
            marks = [FieldWrite("name", owner if n % 3 else other, after=f"v{n}-{round_ % 2}")]
            if round_ == 2 and n % 5 == 0:
                marks.append(FieldWrite("late", owner, after=n))
            writer.record("update", "programs", (f"P{n:03d}",), f"id-{n}", marks,
                          updated=(round_ * 100 + n, "svc" if n % 7 or round_ == 0 else "staff"))
        history.finish_apply(writer)
    write_snapshot(tmp_path / "full", history.snapshot)
    assert _files(tmp_path / "h" / "snapshot") == _files(tmp_path / "full")
    assert History.open(tmp_path / "h").snapshot == history.snapshot


def test_a_journal_begun_before_another_apply_finished_is_folded_over_that_apply(tmp_path: Path) -> None:
    owner = Owner("m.yaml", "b")
    history = History.open(tmp_path)
    first = history.begin_apply("test", plan_digest=None, by=None)
    # A second apply at once is refused (loader.history.locking); a writer made over the same snapshot
    # stands for one whose snapshot moved under it all the same.
    info = ApplyInfo("20260101T000001000Z-abcdef", "2026-01-01T00:00:01+00:00", "test", None, None)
    second = JournalWriter(tmp_path / "journal" / f"{info.apply_id}.open.jsonl", info, history.digester,
                           base=history.snapshot)
    first.record("update", "programs", ("P1",), "id-1", [FieldWrite("name", owner, after="one"),
                                                         FieldWrite("code", owner, after="P1")])
    second.record("update", "programs", ("P1",), "id-1", [FieldWrite("name", owner, after="two")], updated=(5, "svc"))
    history.finish_apply(first)
    history.finish_apply(second)  # its overlay was made over the snapshot before `first`: replayed over the new one
    line = history.line("programs", ("P1",))
    assert line is not None and line.updated_time == 5
    assert line.fields["name"].written == history.digester.value("programs", ("P1",), "name", "two")
    assert line.fields["code"].written == history.digester.value("programs", ("P1",), "code", "P1")
    assert History.open(tmp_path).snapshot == history.snapshot
