"""A journal larger than the part size is written as parts, none over it, and read whole in order:
reading, folding (finished or left by a kill), the revert's records and `history --entity`; a part
deleted or edited is a clear error naming it. A history of the previous format (2) reads unchanged.

tests/fixtures/history-format-2/local was made by the format 2 release's `loader apply` of the
schools project (SCI renamed "School of Science", LAW created) against a sandbox seeded with SCI
"Science" and ENG "Engineering".
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.project import schools_project

from loader.cli import main
from loader.errors import EXIT_ERROR
from loader.history.errors import HistoryError
from loader.history.journal import FieldWrite
from loader.history.journal_parts import part_path
from loader.history.journal_reading import part_paths, read_journal
from loader.history.lines import Owner
from loader.history.listing import applies, record_loads
from loader.history.store import History, finished_journals
from loader.plan.revert_writes import pick_journal, records_written
from loader.sandbox.server import SandboxOptions, serve_in_thread

OWNER = Owner("courses.yaml", "courses")
OTHER = Owner("extra.yaml", "labels")
PART_BYTES = 2048
RECORDS = 40
FORMAT_2 = Path(__file__).parent.parent / "fixtures" / "history-format-2" / "local"


def _uuid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def _load(folder: Path, *, finish: bool = True) -> History:
    """An apply of RECORDS creates into the history in `folder`, parts of PART_BYTES at most; not
    finished (`finish` False): its files as a SIGKILL leaves them."""
    history = History.open(folder, max_file_bytes=PART_BYTES)
    writer = history.begin_apply("test", plan_digest="sha256:1", by="ann")
    for n in range(RECORDS):
        writer.record("create", "courses", (f"C{n:03d}",), _uuid(n),
                      [FieldWrite("code", OWNER, after=f"C{n:03d}"), FieldWrite("name", OWNER, after=f"Course {n}"),
                       FieldWrite("custom_attributes.Level", OTHER, after=str(n % 5))],
                      updated=(1_700_000_000_000 + n, "svc"))
    if finish:
        history.finish_apply(writer)
    else:
        writer.close()
    return history


def _first_part(folder: Path) -> Path:
    (path,) = finished_journals(folder)
    return path


def test_a_large_journal_is_parts_none_over_the_part_size_read_whole_in_order(tmp_path: Path) -> None:
    _load(tmp_path)
    first = _first_part(tmp_path)
    parts = part_paths(first)
    assert len(parts) > 2 and set(parts) == set(tmp_path.joinpath("journal").glob("*.jsonl"))
    assert all(part.stat().st_size <= PART_BYTES for part in parts)
    journal = read_journal(first)
    assert [entry.key for entry in journal.entries] == [f'["C{n:03d}"]' for n in range(RECORDS)]
    assert journal.counts == {"create": RECORDS}
    entry = journal.entries[-1]
    assert entry.fields["name"].owner == OWNER and entry.fields["custom_attributes.Level"].owner == OTHER
    assert (entry.fields["name"].before, entry.fields["name"].after) == (None, f"Course {RECORDS - 1}")
    reopened = History.open(tmp_path)
    assert reopened.snapshot.count("courses") == RECORDS and len(reopened.journals()) == 1
    last = reopened.line("courses", (f"C{RECORDS - 1:03d}",))
    assert last is not None and last.updated_time == 1_700_000_000_000 + RECORDS - 1


def test_revert_and_history_entity_read_every_part(tmp_path: Path) -> None:
    history = _load(tmp_path)
    journal = pick_journal(history.journals(), None, str(tmp_path), last=history.head.last_apply)
    assert [writes.key for writes in records_written(journal)] == [f'["C{n:03d}"]' for n in range(RECORDS)]
    loads = record_loads(history, "courses", (f"C{RECORDS - 1:03d}",))  # in the last part
    assert [load.kind for load in loads.loads] == ["create"]
    (row,) = applies(history)  # the counts, from the end line in the last part
    assert row.finished and row.counts == {"create": RECORDS}
    assert {field.field: field.changed for field in loads.loads[0].fields} == dict.fromkeys(
        ["code", "custom_attributes.Level", "name"], True)


def test_a_journal_of_parts_left_by_a_kill_is_folded_whole(tmp_path: Path) -> None:
    _load(tmp_path, finish=False)
    (leftover,) = tmp_path.joinpath("journal").glob("*.open.jsonl")
    assert part_path(leftover, 2).exists()
    history = History.open(tmp_path)
    assert history.snapshot.count("courses") == RECORDS
    assert [info.apply_id for info in history.interrupted] == [leftover.name.split(".")[0]]


def test_a_missing_middle_part_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    _load(tmp_path)
    missing = part_paths(_first_part(tmp_path))[1]
    missing.unlink()
    with pytest.raises(HistoryError) as raised:
        History.open(tmp_path)
    assert raised.value.where == str(missing) and "part 2" in raised.value.message
    assert "git checkout" in str(raised.value.hint)


def test_a_part_of_another_journal_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    _load(tmp_path)
    second = part_paths(_first_part(tmp_path))[1]
    second.write_text(second.read_text(encoding="utf-8").replace('"part":2', '"part":3', 1), encoding="utf-8")
    with pytest.raises(HistoryError) as raised:
        read_journal(_first_part(tmp_path))
    assert raised.value.where == str(second) and "header of part 2" in raised.value.message


def test_a_history_of_format_2_reads_unchanged_and_takes_a_format_3_apply(tmp_path: Path) -> None:
    folder = tmp_path / "local"
    shutil.copytree(FORMAT_2, folder)
    history = History.open(folder)
    (journal,) = history.journals()
    update, create = journal.entries
    assert (update.fields["name"].before, update.fields["name"].after) == ("Science", "School of Science")
    assert create.kind == "create" and create.fields["code"].owner == Owner("schools.yaml", "schools")
    loads = record_loads(history, "school", ("SCI",))
    assert [(field.field, field.before) for field in loads.loads[0].fields] == [("name", "Science")]
    writer = history.begin_apply("sandbox", plan_digest=None, by="ann")
    writer.record("update", "school", ("LAW",), "00000000-0000-4000-8000-000000000009",
                  [FieldWrite("name", Owner("schools.yaml", "schools"), after="Laws", before="Law")])
    history.finish_apply(writer)
    reopened = History.open(folder)
    assert [len(j.entries) for j in reopened.journals()] == [2, 1]
    assert [load.kind for load in record_loads(reopened, "school", ("LAW",)).loads] == ["create", "update"]
    assert '"format": 3' in (folder / "head.json").read_text(encoding="utf-8")


def test_a_plan_over_a_journal_missing_a_part_exits_1_naming_the_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        schools_project(tmp_path, sandbox, monkeypatch)
        folder = tmp_path / "history" / "local"
        _load(folder)
        missing = part_paths(_first_part(folder))[1]
        missing.unlink()
        capsys.readouterr()
        assert main(["plan", "schools.yaml", "--env", "local"]) == EXIT_ERROR
        err = capsys.readouterr().err
        assert missing.name in err and "part 2" in err and "git checkout" in err
