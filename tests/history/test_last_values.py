"""The value the loader last left in a field, read from the journals' text (`History.last_values`):
the newest journal that kept a value wins, a journal's parts are read in order (its last entry of
the field wins), keys with quotes and values that nest a "key" are told apart, a format 1 journal
(which kept no values after) gives none; and every answer is what reading the journals whole gives.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers.journals import newest_values_read_whole

from loader.history.journal import FieldWrite
from loader.history.journal_reading import part_paths
from loader.history.lines import Owner
from loader.history.store import History, finished_journals

OWNER = Owner("courses.yaml", "courses")
PART_BYTES = 2048
FORMAT_1 = Path(__file__).parent.parent / "fixtures" / "history-format-1" / "local"


def _uuid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def _apply(history: History, writes: list[tuple[str, list[FieldWrite]]]) -> None:
    writer = history.begin_apply("test", plan_digest="sha256:1", by="ann")
    for n, (code, fields) in enumerate(writes):
        writer.record("update", "courses", (code,), _uuid(n), fields, updated=(1_700_000_000_000 + n, "svc"))
    history.finish_apply(writer)



def _token(history: History, code: str) -> str:
    return history.digester.key_token("courses", (code,))


def test_the_newest_value_of_each_field_across_journals_and_parts(tmp_path: Path) -> None:
    history = History.open(tmp_path, max_file_bytes=PART_BYTES)
    _apply(history, [(f"C{n:03d}", [FieldWrite("name", OWNER, after=f"Course {n}"),
                                     FieldWrite("credits", OWNER, after=n)]) for n in range(40)])
    _apply(history, [("C005", [FieldWrite("name", OWNER, after="Renamed")]),
                     ("C007", [FieldWrite("name", OWNER)])])  # no value after: the older one stands
    _apply(history, [('Q"\\1', [FieldWrite("name", OWNER, after="quoted")]),
                     ("C001", [FieldWrite("parent", OWNER, after={"key": "C002", "note": '"key":"C003"'})]),
                     ("C002", [FieldWrite("name", OWNER, after="first"), FieldWrite("name", OWNER, after="second")])])
    history = History.open(tmp_path)
    assert len(part_paths(finished_journals(tmp_path)[0])) > 2  # the first journal is in parts
    asked = [("C005", "name"), ("C007", "name"), ("C039", "name"), ("C039", "credits"), ('Q"\\1', "name"),
             ("C001", "parent"), ("C002", "name"), ("C003", "parent"), ("C099", "name")]
    wanted = {("courses", _token(history, code), name) for code, name in asked}
    found = history.last_values(wanted)
    assert {(code, name): found.get(("courses", _token(history, code), name)) for code, name in asked} == {
        ("C005", "name"): "Renamed", ("C007", "name"): "Course 7", ("C039", "name"): "Course 39",
        ("C039", "credits"): 39, ('Q"\\1', "name"): "quoted",
        ("C001", "parent"): {"key": "C002", "note": '"key":"C003"'}, ("C002", "name"): "second",
        ("C003", "parent"): None, ("C099", "name"): None,
    }
    assert found == newest_values_read_whole(history, wanted)


def test_a_format_1_journal_kept_no_values(tmp_path: Path) -> None:
    shutil.copytree(FORMAT_1, tmp_path / "local")
    history = History.open(tmp_path / "local")
    wanted = {(e.entity, e.key, name) for j in history.journals() for e in j.entries for name in e.fields}
    assert wanted and history.last_values(wanted) == {} == newest_values_read_whole(history, wanted)
