"""The snapshot: round trip, byte-identical files for the same content, shards under a size limit."""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given, settings
from hypothesis import strategies as st

from loader.history.lines import FieldMark, HistoryLine, Owner
from loader.history.snapshot import Snapshot
from loader.history.snapshot_files import read_snapshot, write_snapshot

OWNERS = [Owner("programs.yaml", "programs"), Owner("extra.yaml", "more\ttabs"), Owner("ü.yaml", "b")]
DIGEST = st.text("ABCDEFGHIJabcdef0123456789-_", min_size=12, max_size=12)
WRITTEN = st.one_of(DIGEST, st.frozensets(DIGEST, max_size=3))
EDITED = st.tuples(st.integers(0, 2**45), st.none() | st.text(max_size=40))
FIELDS = st.dictionaries(st.sampled_from(["code", "name", "tags", "custom_attributes.Campus\tX"]),
                         st.builds(FieldMark, st.sampled_from(OWNERS), WRITTEN, st.none() | EDITED), max_size=4)
KEYS = st.text(min_size=1, max_size=8).map(lambda s: '["' + s.encode("unicode_escape").decode().replace('"', "") + '"]')
LINES = st.builds(HistoryLine, KEYS, st.text("abc123=", min_size=1, max_size=6),
                  st.none() | st.integers(0, 2**45), st.none() | st.sampled_from(["svc", "staff", "ü"]), FIELDS,
                  st.lists(KEYS, max_size=3, unique=True).map(tuple))


def _unique(lines: list[HistoryLine]) -> list[HistoryLine]:
    first: dict[str, HistoryLine] = {}
    for line in lines:
        first.setdefault(line.key, line)
    return list(first.values())


def _snapshot(lines: list[HistoryLine]) -> Snapshot:
    return Snapshot().with_lines("programs", lines)


@settings(max_examples=25, deadline=None)
@given(st.lists(LINES, max_size=20))
def test_records_written_and_read_back_are_equal_and_files_repeat_byte_for_byte(lines: list[HistoryLine]) -> None:
    lines = _unique(lines)
    snapshot = _snapshot(lines)
    with TemporaryDirectory() as a, TemporaryDirectory() as b:
        write_snapshot(Path(a), snapshot)
        read = read_snapshot(Path(a))
        assert read == snapshot
        for line in snapshot.lines("programs"):
            assert read.get("programs", line.key) == line
            assert read.key_for_id("programs", line.live_id) is not None
        write_snapshot(Path(b), _snapshot(list(reversed(lines))))
        write_snapshot(Path(b) / "again", read)  # raw lines written back as read
        files = sorted(p.name for p in Path(a).iterdir())
        assert files == sorted(p.name for p in Path(b).iterdir() if p.is_file())
        for name in files:
            first = (Path(a) / name).read_bytes()
            assert first == (Path(b) / name).read_bytes() == (Path(b) / "again" / name).read_bytes()


def _many(n: int) -> Snapshot:
    owner = OWNERS[0]
    return Snapshot().with_lines("programs", (
        HistoryLine(f'["P{i:05d}"]', f"id{i}", 1_700_000_000_000 + i, "svc",
                    {"code": FieldMark(owner, "A" * 12), "name": FieldMark(owner, "B" * 12)}) for i in range(n)))


def test_a_large_entity_is_split_by_key_range_under_the_size_limit(tmp_path: Path) -> None:
    snapshot = _many(500)
    paths = write_snapshot(tmp_path, snapshot, max_bytes=4000)
    assert len(paths) > 5 and all(p.stat().st_size <= 4000 for p in paths)
    assert [p.name for p in paths][:2] == ["programs.000.tsv", "programs.001.tsv"]
    first_keys = [p.read_text().splitlines()[-1].split("\t")[0] for p in paths]
    assert first_keys == sorted(first_keys)
    assert read_snapshot(tmp_path) == snapshot
    write_snapshot(tmp_path, _many(3), max_bytes=4000)  # shrinks back to one file: stale shards go
    assert sorted(p.name for p in tmp_path.iterdir()) == ["programs.tsv"]


def test_one_line_a_record_sorted_by_key(tmp_path: Path) -> None:
    write_snapshot(tmp_path, _many(3))
    rows = (tmp_path / "programs.tsv").read_text().splitlines()
    records = [r for r in rows if not r.startswith("#")]
    assert len(records) == 3 and records == sorted(records)


@settings(max_examples=25, deadline=None)
@given(st.lists(LINES, max_size=12), st.lists(LINES, max_size=6))
def test_updating_a_read_snapshot_writes_the_bytes_of_a_fresh_one(base: list[HistoryLine],
                                                                    updates: list[HistoryLine]) -> None:
    base, updates = _unique(base), _unique(updates)
    with TemporaryDirectory() as a, TemporaryDirectory() as b:
        write_snapshot(Path(a), _snapshot(base))
        updated = read_snapshot(Path(a)).with_lines("programs", updates)  # raw lines kept where they can be
        write_snapshot(Path(a), updated)
        final = {line.key: line for line in [*base, *updates]}
        write_snapshot(Path(b), _snapshot(list(final.values())))
        assert read_snapshot(Path(a)) == read_snapshot(Path(b))
        for path in Path(b).iterdir():
            assert (Path(a) / path.name).read_bytes() == path.read_bytes()


def test_a_new_owner_renders_the_entity_afresh(tmp_path: Path) -> None:
    write_snapshot(tmp_path, _many(3))
    line = HistoryLine('["P00001"]', "x", None, None, {"name": FieldMark(OWNERS[2], "C" * 12)})
    write_snapshot(tmp_path, read_snapshot(tmp_path).with_lines("programs", [line]))
    assert read_snapshot(tmp_path).get("programs", '["P00001"]') == line
    assert read_snapshot(tmp_path) == _many(3).with_lines("programs", [line])


def test_a_format_1_file_reads_as_lines_without_former_keys_and_is_written_in_format_2(tmp_path: Path) -> None:
    folder = tmp_path / "snapshot"
    folder.mkdir()
    (folder / "programs.tsv").write_text(
        '#loader-history-snapshot 1\tprograms\n#field\t"code"\n#field\t"name"\n#owner\t["p.yaml","p"]\n'
        '#user\t"svc"\n["P1"]\t=id-1\t5\t0\t0.AAAAAAAAAAAA\t0.BBBBBBBBBBBB\n["P2"]\t=id-2\t\t\n', encoding="utf-8")
    snapshot = read_snapshot(folder)
    owner = Owner("p.yaml", "p")
    assert snapshot.get("programs", '["P1"]') == HistoryLine(
        '["P1"]', "=id-1", 5, "svc", {"code": FieldMark(owner, "A" * 12), "name": FieldMark(owner, "B" * 12)})
    assert snapshot.get("programs", '["P2"]') == HistoryLine('["P2"]', "=id-2")
    write_snapshot(folder, snapshot)
    first = (folder / "programs.tsv").read_text(encoding="utf-8").splitlines()[0]
    assert first == "#loader-history-snapshot 2\tprograms"
    assert read_snapshot(folder) == snapshot


def test_former_keys_and_first_platform_changes_are_kept_on_the_line(tmp_path: Path) -> None:
    owner = Owner("p.yaml", "p")
    line = HistoryLine('["MATH2001"]', "=id-1", 5, "svc",
                       {"name": FieldMark(owner, "A" * 12, (1_717_000_000_000, "0c627dbf-5685-4a5e-9d0e-3f1b2c4d5e6f")),
                        "tags": FieldMark(owner, frozenset({"B" * 8, "C" * 8}), (7, None))},
                       ('["MATH201"]',))
    write_snapshot(tmp_path, _snapshot([line]))
    text = (tmp_path / "programs.tsv").read_text(encoding="utf-8")
    assert '\t["[\\"MATH201\\"]"]\t' in text and "@1717000000000:" in text and "@7\n" in text
    read = read_snapshot(tmp_path)
    assert read.get("programs", '["MATH2001"]') == line
    assert read.key_for_former("programs", '["MATH201"]') == '["MATH2001"]'
    assert read.key_for_former("programs", '["MATH2001"]') is None
