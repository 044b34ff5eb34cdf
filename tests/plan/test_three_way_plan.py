"""The three-way plan against the sandbox as a real server: the loader writes through its client
(and its history is written as an apply leaves it), a person edits through `staff-client`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from helpers.three_way import SCHOOLS_OWNER, World, record_of, schools_mapping, world

from loader.apply.guards import records_in_scope
from loader.files.package_data import schema
from loader.history.lines import Owner
from loader.plan.model import Action
from loader.plan.plan_file import read_plan_json, write_plan_json
from loader.plan.shown import SHOWN, shown_marks
from loader.report.html import render_html
from loader.report.machine import dumps, plan_document
from loader.report.markdown import render as render_markdown
from loader.report.rules import rule_groups
from loader.report.terminal import render_text


@pytest.fixture
def w(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    monkeypatch.chdir(tmp_path)
    with world(tmp_path) as made:
        yield made


def _four(w: World, policy: str | None = None) -> dict[str, str]:
    ids = w.load([{"code": c, "name": n} for c, n in
                  [("SCI", "Science"), ("ENG", "Engineering"), ("LAW", "Law"), ("MED", "Medicine")]])
    w.edit(ids["SCI"], {"name": "Sciences"})  # the sheet still says what the loader wrote: a kept edit
    w.edit(ids["ENG"], {"name": "Eng"})  # the sheet changed too, to a third value: a conflict
    w.edit(ids["MED"], {"name": "Medical"})  # the sheet caught up with the platform
    w.sheet([("SCI", "Science"), ("ENG", "Engineering Faculty"), ("LAW", "Laws"), ("MED", "Medical")],
            mapping=schools_mapping(name_policy=policy))
    return ids


def test_the_four_cases_under_keep(w: World) -> None:
    ids = _four(w)
    plan = w.plan()
    assert plan.blocks[0].mapping_file == "schools.yaml"
    sci, eng, law, med = (record_of(plan, c) for c in ("SCI", "ENG", "LAW", "MED"))
    staff_user = sci.kept[0].changed_by
    assert staff_user and staff_user not in w.history().own_users()
    assert sci.action is Action.UNCHANGED and not sci.payload
    assert [(k.field, k.sheet, k.live, k.last_loaded) for k in sci.kept] == [("name", "Science", "Sciences", "Science")]
    assert eng.action is Action.UNCHANGED and "name" not in eng.payload
    assert [(c.field, c.sheet, c.live, c.last_loaded) for c in eng.conflicts] == [
        ("name", "Engineering Faculty", "Eng", "Engineering")]  # last loaded: the journal's value after
    assert law.action is Action.UPDATE and law.payload == {"name": "Laws"} and law.history_line
    assert dict(law.written_after)["name"]
    assert med.action is Action.UNCHANGED and med.confirmed == ("name",) and not med.kept
    assert sci.live_id == ids["SCI"]
    assert not plan.has_errors


@pytest.mark.parametrize("policy", ["sheet", "platform"])
def test_each_policy(w: World, policy: str) -> None:
    _four(w, policy)
    plan = w.plan()
    sci, eng = record_of(plan, "SCI"), record_of(plan, "ENG")
    if policy == "sheet":  # the sheet wins: kept edits and conflicts become updates
        assert sci.payload == {"name": "Science"} and eng.payload == {"name": "Engineering Faculty"}
        assert not sci.kept and not eng.conflicts
    else:  # never overwrite a field changed in the platform
        assert not sci.payload and not eng.payload and not eng.conflicts
        assert [k.field for k in sci.kept] == ["name"] and [k.field for k in eng.kept] == ["name"]


def test_labels_one_by_one_and_a_conflict_holds_only_its_own_field(w: World) -> None:
    ids = w.load([{"code": "SCI", "name": "Science", "custom_attributes": {"Faculty": "Natural", "Dean": "Ann"}}])
    w.edit(ids["SCI"], {"custom_attributes": {"Faculty": "Nature", "Dean": "Ann", "Room": "12"}})
    w.sheet([("SCI", "Sciences", "Physical")], faculty=True)
    sci = record_of(w.plan(), "SCI")
    assert [(c.field, c.sheet, c.live) for c in sci.conflicts] == [("custom_attributes.Faculty", "Physical", "Nature")]
    assert sci.action is Action.UPDATE and sci.payload == {"name": "Sciences"}  # the rest goes ahead
    w.sheet([("SCI", "Science", "Natural")], faculty=True)
    sci = record_of(w.plan(), "SCI")
    assert [k.field for k in sci.kept] == ["custom_attributes.Faculty"] and not sci.payload


def test_a_code_corrected_in_the_platform_is_matched_by_id_never_created(w: World) -> None:
    ids = w.load([{"code": "SCI", "name": "Science"}])
    w.edit(ids["SCI"], {"code": "SCI-1"})
    w.sheet([("SCI", "Sciences")])
    plan = w.plan()
    sci = record_of(plan, "SCI")
    assert sci.action is Action.UPDATE and sci.live_id == ids["SCI"]
    assert sci.payload == {"name": "Sciences"} and [k.field for k in sci.kept] == ["code"]
    assert not any(r.action is Action.CREATE for r in plan.records())
    assert plan.blocks[0].not_in_source_records == ()


def test_records_without_history_get_one_note_per_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    seed = {"institution-a": {"schools": [{"id": "00000000-0000-4000-8000-000000000001", "code": "SCI",
                                           "name": "Science"},
                                          {"id": "00000000-0000-4000-8000-000000000002", "code": "ENG",
                                           "name": "Engineering"}]}}
    with world(tmp_path, seed) as w:
        w.load([{"code": "LAW", "name": "Law"}], Owner("other.yaml", "other"))  # the history has started
        w.sheet([("SCI", "Sciences"), ("ENG", "Engineering")])
        plan = w.plan()
        notes = [f for f in plan.blocks[0].findings if f.code == "no-history"]
        assert len(notes) == 1 and notes[0].severity == "warning" and notes[0].message.startswith("2 of block")
        assert record_of(plan, "SCI").payload == {"name": "Sciences"}  # two-way
        w.load([{"code": "SCI", "name": "Sciences"}, {"code": "ENG", "name": "Engineering"}])
        plan = w.plan()
        assert not [f for f in plan.blocks[0].findings if f.code == "no-history"]


def test_the_first_plan_and_the_first_after_a_reset_note_records_changed_by_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    seed = {"institution-a": {"schools": [{"id": "00000000-0000-4000-8000-000000000001", "code": "SCI",
                                           "name": "Science"}]}}
    with world(tmp_path, seed) as w:
        w.sheet([("SCI", "Sciences"), ("LAW", "Law")])  # one loaded by someone else, one to create
        notes = [f for f in w.plan().blocks[0].findings if f.code == "no-history"]
        assert len(notes) == 1 and notes[0].message.startswith("1 of block schools's live records were last "
                                                               "changed by someone other than the loader")
        assert "loader history baseline" in notes[0].message
        w.load([{"code": "LAW", "name": "Law"}])
        w.history().reset()
        notes = [f for f in w.plan().blocks[0].findings if f.code == "no-history"]
        assert len(notes) == 1 and notes[0].message.startswith("2 of block schools's"), notes  # the reset forgot


def test_ownership_shared_refused_taken_over_and_renamed(w: World) -> None:
    w.load([{"code": "SCI", "name": "Science"}], Owner("faculties.yaml", "faculties"))
    w.sheet([("SCI", "Science")])
    assert not w.plan().has_errors  # equal values: shared
    w.sheet([("SCI", "Sciences")])
    plan = w.plan()
    [error] = plan.errors()
    assert error.code == "field-owned-elsewhere" and "'faculties' of faculties.yaml" in error.message
    assert "take_over: true" in error.message and "name" not in record_of(plan, "SCI").payload
    w.sheet([("SCI", "Sciences")], mapping=schools_mapping(extra="    take_over: true\n"))
    plan = w.plan()
    assert not plan.has_errors and record_of(plan, "SCI").payload == {"name": "Sciences"}
    [group] = rule_groups(plan.blocks[0])
    assert group.text == "name taken over from the block that owned it (take_over: true)" and group.place
    formerly = "    formerly: {file: faculties.yaml, block: faculties}\n"
    w.sheet([("SCI", "Sciences")], mapping=schools_mapping(extra=formerly))
    plan = w.plan()
    assert not plan.has_errors and record_of(plan, "SCI").payload == {"name": "Sciences"}


def test_dropped_from_the_source_and_not_managed_here(w: World) -> None:
    ids = w.load([{"code": "SCI", "name": "Science"}, {"code": "ENG", "name": "Engineering"}])
    w.load([{"code": "LAW", "name": "Law"}], Owner("other.yaml", "other"))
    med = w.staff.create("/institution/catalogue/schools", {"code": "MED", "name": "Medicine"})
    w.sheet([("SCI", "Science")])
    plan = w.plan()
    block = plan.blocks[0]
    assert [(d.key, d.id) for d in block.dropped] == [(("ENG",), ids["ENG"])] and block.dropped[0].last_loaded
    assert [n.id for n in block.not_in_source_records] == [med["id"]]  # LAW is another file's: neither
    assert records_in_scope(plan) == 2  # --max-changes P%: SCI (its line) and ENG (dropped), not MED


def test_kept_edits_and_dropped_records_are_listed_once_then_counted(w: World) -> None:
    ids = w.load([{"code": "SCI", "name": "Science"}, {"code": "ENG", "name": "Engineering"}])
    w.edit(ids["SCI"], {"name": "Sciences"})
    w.sheet([("SCI", "Science")])
    plan = w.plan()
    assert not record_of(plan, "SCI").kept[0].seen and not plan.blocks[0].dropped[0].seen
    history = w.history()
    writer = history.begin_apply("sandbox", plan_digest=plan.digest, by="test")  # as apply journals them
    from loader.history.journal import FieldWrite
    for mark in shown_marks(plan):
        writer.record("confirm", mark.entity, mark.key, mark.live_id,
                      [FieldWrite(SHOWN, mark.owner, written=mark.written, as_set=True)])
    history.finish_apply(writer)
    again = w.plan()
    assert record_of(again, "SCI").kept[0].seen and again.blocks[0].dropped[0].seen
    w.edit(ids["SCI"], {"name": "Science Dept"})  # changed again: listed again
    assert not record_of(w.plan(), "SCI").kept[0].seen


def test_a_history_behind_the_service_is_refused(w: World) -> None:
    w.load([{"code": "SCI", "name": "Science"}])
    w.load([{"code": "SCI", "name": "Sciences"}], journal=False)  # an apply whose history was not committed
    w.sheet([("SCI", "Sciences")])
    from loader.history.errors import HistoryBehindError
    with pytest.raises(HistoryBehindError) as refused:
        w.plan()
    assert "the history is behind" in str(refused.value) and "fetch the latest history" in str(refused.value)


def test_a_plan_while_an_apply_writes_the_history_says_so_not_behind(w: World) -> None:
    w.load([{"code": "SCI", "name": "Science"}])
    w.load([{"code": "SCI", "name": "Sciences"}], journal=False)  # written, its journal not yet folded
    w.sheet([("SCI", "Sciences")])
    from loader.history.errors import HistoryBehindError, HistoryError
    from loader.history.locking import hold_folder, release
    held = hold_folder(w.folder / "history")  # an apply running in another terminal
    try:
        with pytest.raises(HistoryError) as refused:
            w.plan()
    finally:
        release(held)
    assert "another apply is writing this history now" in str(refused.value)
    assert not isinstance(refused.value, HistoryBehindError) and "git pull" not in str(refused.value)
    with pytest.raises(HistoryBehindError):  # once it has ended, the history is behind as before
        w.plan()


def test_a_history_of_another_database_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with world(tmp_path) as first:
        first.load([{"code": c, "name": c} for c in ("SCI", "ENG", "LAW")])
    with world(tmp_path) as second:  # a reset sandbox, the same history
        second.loader.create("/institution/catalogue/schools", {"code": "SCI", "name": "Science"})
        second.sheet([("SCI", "Science")])
        from loader.history.errors import AnotherDatabaseError
        with pytest.raises(AnotherDatabaseError) as refused:
            second.plan()
        assert "loader history reset" in str(refused.value)


def test_reports_and_plan_json_carry_kept_edits_and_conflicts(w: World, tmp_path: Path) -> None:
    _four(w)
    plan = w.plan()
    text = render_text(plan, width=400)
    assert "1 conflict held, 1 platform edit kept." in text
    conflicts_at, first_block_at = text.index("Conflicts (1)"), text.index("schools (school)")
    assert conflicts_at < first_block_at  # shown first, with the errors
    assert 'conflict, held: name: live "Eng", sheet "Engineering Faculty", last loaded "Engineering"' in text
    assert "changed in the platform by Robin Staff" in text  # named, not an id
    assert 'kept platform edit: name: live "Sciences" kept (sheet "Science")' in text
    markdown = render_markdown(plan)
    assert "## Conflicts (1)" in markdown and "kept platform edit: name" in markdown
    html = render_html(plan)
    assert html.index('<section id="conflicts">') < html.index('id="plan-data"')
    document = json.loads(dumps(plan_document(plan, 0)))
    jsonschema.Draft202012Validator(schema("output.schema.json")).validate(document)
    assert document["totals"]["kept"] == 1 and document["totals"]["conflicts"] == 1
    written = tmp_path / "plan.json"
    write_plan_json(plan, written)
    back = read_plan_json(written)  # checked against plan.schema.json
    assert record_of(back, "ENG").conflicts == record_of(plan, "ENG").conflicts
    assert record_of(back, "LAW").written_after == record_of(plan, "LAW").written_after
    assert back.blocks[0].mapping_file == "schools.yaml"


def test_writes_of_an_interrupted_apply_are_adopted_not_reported(w: World) -> None:
    ids = w.load([{"code": "SCI", "name": "Science"}, {"code": "ENG", "name": "Engineering"}])
    history = w.history()
    writer = history.begin_apply("sandbox", plan_digest=None, by="test")  # an apply, killed mid-way:
    w.loader.patch(f"/institution/catalogue/schools/{ids['ENG']}", {"name": "Engineering Faculty"})
    writer.record("confirm", "school", ("ENG",), ids["ENG"], [])  # its journal has something, not the write
    w.loader.patch(f"/institution/catalogue/schools/{ids['SCI']}", {"name": "Sciences"})  # sent, not journaled
    writer.close()  # no finish: the journal is left over
    w.sheet([("SCI", "Sciences"), ("ENG", "Engineering Faculty")])
    reopened = w.history()  # folds the leftover journal
    assert [info.apply_id for info in reopened.interrupted] == [writer.info.apply_id]
    plan = w.plan(history=reopened)
    sci, eng = record_of(plan, "SCI"), record_of(plan, "ENG")
    assert not sci.kept and not sci.conflicts and sci.action is Action.UNCHANGED and sci.confirmed == ("name",)
    assert not eng.kept and eng.confirmed == ("name",)


def test_a_conflict_is_a_github_warning_at_its_record(w: World) -> None:
    import io

    from loader.report.github import print_conflict_annotations

    _four(w)
    out = io.StringIO()
    print_conflict_annotations(w.plan(), out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("::warning title=schools%3A conflict::")
    assert "(ENG): name changed in the sheet and in the platform" in lines[0]
    assert "sheet 'Engineering Faculty', live 'Eng'" in lines[0]


def test_an_interrupted_apply_is_adopted_however_many_applies_came_after(w: World) -> None:
    ids = w.load([{"code": "SCI", "name": "Science"}])
    writer = w.history().begin_apply("sandbox", plan_digest=None, by="test")  # an apply, killed mid-way:
    w.loader.patch(f"/institution/catalogue/schools/{ids['SCI']}", {"name": "Sciences"})  # sent, not journaled
    writer.record("confirm", "school", ("SCI",), ids["SCI"], [])
    writer.close()
    for n in range(4):  # four applies of other schools since, each finished
        w.load([{"code": f"NEW{n}", "name": f"New {n}"}])
    w.sheet([("SCI", "Sciences")])
    plan = w.plan()  # not "the history is behind": the write is the interrupted apply's
    sci = record_of(plan, "SCI")
    assert sci.action is Action.UNCHANGED and sci.confirmed == ("name",) and not sci.kept


def test_a_write_of_the_loader_after_an_interrupted_apply_and_the_next_is_the_history_behind(w: World) -> None:
    from datetime import UTC, datetime, timedelta

    from loader.history.errors import HistoryBehindError
    from loader.history.journal import FieldWrite

    ids = w.load([{"code": "SCI", "name": "Science"}])
    hour_ago = datetime.now(UTC) - timedelta(hours=1)
    history = w.history()
    interrupted = history.begin_apply("sandbox", plan_digest=None, by="test", time=hour_ago)
    interrupted.record("confirm", "school", ("SCI",), ids["SCI"], [])
    interrupted.close()  # left over, folded by the next command
    history = w.history()
    later = history.begin_apply("sandbox", plan_digest=None, by="test", time=hour_ago + timedelta(minutes=1))
    later.record("confirm", "school", ("NONE",), "no-such-id", [FieldWrite("name", SCHOOLS_OWNER, after="x")])
    history.finish_apply(later)
    w.loader.patch(f"/institution/catalogue/schools/{ids['SCI']}", {"name": "Sciences"})  # now: no apply's
    w.sheet([("SCI", "Sciences")])
    with pytest.raises(HistoryBehindError):
        w.plan()
