"""A snapshot line's digest and marks read from its text are those of the line parsed."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from loader.history.lines import FieldMark, HistoryLine, Owner, line_digest
from loader.history.snapshot import (
    Snapshot,
    parse_line,
    raw_line_digest,
    read_snapshot,
    write_snapshot,
)
from loader.plan.history_untouched import TextMarks, line_columns

odd = st.text(alphabet=st.sampled_from(['a', 'Z', ' ', '"', '\\', 'é', '\u2028', '\x01', '/', '.', ',', '[']),
              min_size=1, max_size=6)
token = st.text(alphabet="abcXYZ019-_=", min_size=1, max_size=12)
marks = st.dictionaries(
    odd.filter(lambda n: "\t" not in n and "\n" not in n),
    st.builds(FieldMark, st.builds(Owner, odd, odd),
              st.one_of(token, st.frozensets(token, min_size=1, max_size=3))),
    max_size=4)
lines = st.builds(HistoryLine, st.builds(lambda k: f'["{k}"]', token), token,
                  st.one_of(st.none(), st.integers(0, 2**45)), st.one_of(st.none(), odd), marks)


@settings(max_examples=300, deadline=None)
@given(st.lists(lines, min_size=1, max_size=5, unique_by=lambda line: line.key))
def test_a_line_read_from_its_text_has_the_digest_and_marks_of_the_line_parsed(made: list[HistoryLine]) -> None:
    with tempfile.TemporaryDirectory() as folder:  # written and read back as a history keeps it
        write_snapshot(Path(folder), Snapshot({"programs": {line.key: line for line in made}}))
        tables, texts = read_snapshot(Path(folder)).raw_items("programs")
    assert tables is not None and len(texts) == len(made)
    for text in texts.values():
        assert isinstance(text, str)
        parsed = parse_line(text, tables)
        assert raw_line_digest(text, tables) == line_digest(parsed)
        marks = TextMarks(text, line_columns(tables), frozenset({0}))
        assert (marks.id_token, marks.time) == (parsed.live_id, parsed.updated_time)
        assert {name for name in tables.fields if marks.has(name)} == set(parsed.fields)
        for name, mark in parsed.fields.items():
            assert marks.mark_of(name) == (mark.owner == tables.owners[0], mark.written)


def test_a_line_of_tables_not_sorted_has_the_digest_of_the_line_parsed() -> None:
    from loader.history.snapshot import Tables

    tables = Tables(("name", "code"), (Owner("b.yaml", "b"), Owner("a.yaml", "a")), ("staff",))
    text = '["X1"]\tid1\t1700000000000\t0\t1.Wname\t0.[e2,e1'
    assert raw_line_digest(text, tables) == line_digest(parse_line(text, tables))
    assert raw_line_digest(text.split("\t"), tables) == raw_line_digest(text, tables)
