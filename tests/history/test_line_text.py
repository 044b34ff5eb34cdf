"""A line's fingerprint read off the snapshot's text is the one `line_digest` makes of the line."""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given, settings
from hypothesis import strategies as st

from loader.history.line_text import LineTexts
from loader.history.lines import FieldMark, HistoryLine, Owner, line_digest
from loader.history.snapshot import Snapshot, read_snapshot, write_snapshot

OWNERS = [Owner("programs.yaml", "programs"), Owner("extra.yaml", 'more "quoted"\ttabs'), Owner("ü.yaml", "b\\")]
DIGEST = st.text("ABCDEFGHIJabcdef0123456789-_", min_size=12, max_size=12)
WRITTEN = st.one_of(DIGEST, st.frozensets(DIGEST, max_size=3))
EDITED = st.tuples(st.integers(0, 2**45), st.none() | st.text(max_size=40))
NAMES = ["code", "name", "tags", "custom_attributes.Campus\tX", 'custom_attributes."Ü"', "Zeta"]
FIELDS = st.dictionaries(st.sampled_from(NAMES),
                         st.builds(FieldMark, st.sampled_from(OWNERS), WRITTEN, st.none() | EDITED), max_size=5)
KEYS = st.text(min_size=1, max_size=8).map(lambda s: '["' + s.encode("unicode_escape").decode().replace('"', "") + '"]')
LINES = st.builds(HistoryLine, KEYS, st.text("abc123=", min_size=1, max_size=6),
                  st.none() | st.integers(0, 2**45), st.none() | st.sampled_from(["svc", "staff", "ü \"x\""]),
                  FIELDS, st.lists(KEYS, max_size=3, unique=True).map(tuple))


@settings(max_examples=40, deadline=None)
@given(st.lists(LINES, min_size=1, max_size=12))
def test_the_fingerprint_of_a_lines_text_is_line_digest_of_the_line(lines: list[HistoryLine]) -> None:
    unique = list({line.key: line for line in lines}.values())
    with TemporaryDirectory() as folder:
        write_snapshot(Path(folder), Snapshot().with_lines("programs", unique))
        read = read_snapshot(Path(folder))
    tables, items = read.raw_items("programs")
    assert tables is not None
    texts = LineTexts(tables)
    for line in unique:
        text = items[line.key]
        assert isinstance(text, str)  # as read: the text, not parsed yet
        assert texts.digest(text) == line_digest(read.get("programs", line.key)) == line_digest(line)
