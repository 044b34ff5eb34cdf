"""The applies a history lists, from each journal's header and counts (an interrupted one counted)."""

from __future__ import annotations

from pathlib import Path

from loader.history.journal import FieldWrite
from loader.history.lines import Owner
from loader.history.listing import applies, record_loads
from loader.history.store import History

OWNER = Owner("mappings/courses.yaml", "courses")


def test_an_interrupted_apply_is_listed_with_the_entries_it_journaled(tmp_path: Path) -> None:
    history = History.open(tmp_path)
    done = history.begin_apply("test", plan_digest="sha256:1", by="a", apply_id="20260101T000000Z-000001")
    done.record("create", "course", ("C1",), "id-1", [FieldWrite("name", OWNER, after="One")])
    history.finish_apply(done, {"created": 1})
    killed = history.begin_apply("test", plan_digest="sha256:2", by="b", apply_id="20260102T000000Z-000002")
    killed.record("update", "course", ("C1",), "id-1", [FieldWrite("name", OWNER, after="Two", before="One")])
    killed.record("create", "course", ("C2",), "id-2", [FieldWrite("name", OWNER, after="Deux")])
    killed.close()  # as if killed: no counts
    with killed.path.open("ab") as torn:
        torn.write(b'{"kind":"upd')
    reopened = History.open(tmp_path)  # folds the leftover
    newest, oldest = applies(reopened)
    assert (newest.apply_id, newest.finished, dict(newest.counts)) == ("20260102T000000Z-000002", False,
                                                                      {"create": 1, "update": 1})
    assert (oldest.by, oldest.plan_digest, oldest.finished, dict(oldest.counts)) == ("a", "sha256:1", True,
                                                                                    {"create": 1, "created": 1})
    loads = record_loads(reopened, "course", ("C1",))
    assert [(load.kind, load.fields[0].before, load.fields[0].after, load.fields[0].known_after)
            for load in loads.loads] == [("create", None, "One", True), ("update", "One", None, False)]
