"""The revert plan, as a pure function of one apply's journal, the live records and the profile."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from loader.apply.results import Outcome, RecordResult, Results
from loader.commands.revert_decisions import record_revert_decisions, revert_decisions
from loader.history.decisions import Decisions, Kind, ProposedChange, match_decisions, read_decisions, sort_key
from loader.history.digests import Digester
from loader.history.errors import HistoryError
from loader.history.journal import FieldWrite
from loader.history.lines import Owner, line_digest
from loader.history.store import History
from loader.plan.diff import PlanHeader
from loader.plan.model import Action, Plan
from loader.plan.plan_file import write_plan_json
from loader.plan.revert import CREATED, KEPT, PERSONAL, revert_plan
from loader.plan.revert_writes import pick_journal
from loader.profile import load_profile

PROFILE = load_profile()
OWNER = Owner("mappings/arrangements.yaml", "arrangements")
COURSES = Owner("mappings/curriculum.yaml", "courses")
KEY = b"a test history key"
HEADER = PlanHeader(environment="sandbox", env_name="sandbox", fingerprints={"j.jsonl": "sha256:0"})


def _history(tmp_path: Path) -> History:
    return History.open(tmp_path / "history", history_key=KEY, personal=("applicant",))


def _arrangement(code: str, status: str, name: str, **more: Any) -> dict[str, Any]:
    return {"id": f"id-{code}", "code": code, "name": name, "status": status,
            "metadata": {"updated": {"time": 7, "user": "svc"}}, **more}


def _apply(history: History, writes: list[tuple[str, str, tuple[Any, ...], str | None, list[FieldWrite]]]) -> str:
    writer = history.begin_apply("sandbox", plan_digest="sha256:1", by="ann")
    for kind, entity, key, live_id, fields in writes:
        writer.record(kind, entity, key, live_id, fields, updated=(5, "svc"))
    history.finish_apply(writer)
    return writer.info.apply_id


def _revert(history: History, live: dict[str, list[dict[str, Any]]], apply_id: str | None = None) -> Plan:
    journal = pick_journal(history.journals(), apply_id, "history", last=history.head.last_apply)
    return revert_plan(journal, live, PROFILE, history, HEADER, journal_file="j.jsonl")


def _messages(plan: Plan) -> list[str]:
    return [f.message for block in plan.blocks for f in block.findings]


def test_fields_go_back_where_live_holds_what_the_apply_wrote_and_are_kept_where_changed_since(
    tmp_path: Path,
) -> None:
    history = _history(tmp_path)
    _apply(history, [
        ("update", "arrangement", ("A1",), "id-A1", [FieldWrite("name", OWNER, after="New", before="Old")]),
        ("update", "arrangement", ("A2",), "id-A2", [FieldWrite("name", OWNER, after="New 2", before="Old 2")]),
    ])
    live = {"arrangement": [_arrangement("A1", "DRAFT", "New"), _arrangement("A2", "DRAFT", "Edited by staff")]}
    plan = _revert(history, live)
    (record,) = plan.records()
    assert record.key == ("A1",) and record.action is Action.UPDATE and record.payload == {"name": "Old"}
    assert [(c.field, c.old, c.new) for c in record.changes] == [("name", "New", "Old")]
    assert record.live_id == "id-A1" and record.live_updated_time == 7 and record.block == "arrangements"
    assert record.history_line == line_digest(history.line("arrangement", ("A1",)))
    assert _messages(plan) == [f"arrangement A2 (id id-A2): name: {KEPT} (live: 'Edited by staff')"]
    assert plan.blocks[0].mapping_file == OWNER.file
    assert plan.revert_of == history.journals()[-1].info.apply_id
    assert plan.digest is not None and plan.digest.startswith("sha256:")


def test_a_status_goes_back_along_a_legal_path_only(tmp_path: Path) -> None:
    history = _history(tmp_path)
    _apply(history, [
        ("update", "arrangement", ("A1",), "id-A1", [FieldWrite("status", OWNER, after="READY", before="DRAFT")]),
        ("update", "arrangement", ("A2",), "id-A2", [FieldWrite("status", OWNER, after="READY", before="DRAFT")]),
        ("update", "arrangement", ("A2",), "id-A2", [FieldWrite("status", OWNER, after="ACTIVE", before="READY")]),
    ])
    live = {"arrangement": [_arrangement("A1", "READY", "x"), _arrangement("A2", "ACTIVE", "y")]}
    plan = _revert(history, live)
    (record,) = plan.records()
    assert record.key == ("A1",) and record.status_path == ("DRAFT",) and record.payload == {}
    assert record.has_changes and [(c.field, c.old, c.new) for c in record.changes] == [("status", "READY", "DRAFT")]
    assert _messages(plan) == ["arrangement A2 (id id-A2): status: cannot move back from ACTIVE (to DRAFT): "
                               "no legal move"]


def test_created_and_adopted_records_are_listed_for_retirement_by_hand(tmp_path: Path) -> None:
    history = _history(tmp_path)
    _apply(history, [
        ("create", "course", ("C1",), "id-C1", [FieldWrite("name", COURSES, after="One")]),
        ("lost", "course", ("C2",), None, []),
        ("adopt", "course", ("C2",), "id-C2", [FieldWrite("name", COURSES, after="Two")]),
    ])
    live = {"course": [{"id": "id-C1", "code": "C1", "name": "One"}, {"id": "id-C2", "code": "C2", "name": "Two"}]}
    plan = _revert(history, live)
    assert plan.records() == ()
    assert _messages(plan) == [f"course C1 (id id-C1): {CREATED}", f"course C2 (id id-C2): {CREATED}"]


def test_personal_fields_are_listed_as_not_restorable(tmp_path: Path) -> None:
    history = _history(tmp_path)
    _apply(history, [("update", "applicant", ("X-1",), "id-P1",
                      [FieldWrite("email", Owner("m.yaml", "people"), after="new@x.org", before="old@x.org")])])
    plan = _revert(history, {"applicant": [{"id": "id-P1", "external_id": "X-1", "email": "new@x.org"}]})
    assert plan.records() == ()
    assert _messages(plan) == [f"applicant (id id-P1): email: {PERSONAL}"]
    write_plan_json(plan, tmp_path / "revert.json")
    written = (tmp_path / "revert.json").read_text(encoding="utf-8")
    assert not any(value in written for value in ("new@x.org", "old@x.org", "X-1"))


def test_labels_and_sets_go_back_element_by_element_in_the_live_map(tmp_path: Path) -> None:
    history = _history(tmp_path)
    label = "custom_attributes.Faculty"
    _apply(history, [("update", "arrangement", ("A1",), "id-A1", [
        FieldWrite(label, OWNER, after="Science", before="Arts"),
        FieldWrite("custom_attributes.Campus", OWNER, after="North", before=None),
        FieldWrite("subjects_awarded", OWNER, after=["s1", "s2"], before=["s1"], as_set=True),
    ])])
    attributes = {"Faculty": "Science", "Campus": "North", "Other": "kept"}
    live = {"arrangement": [_arrangement("A1", "DRAFT", "x", custom_attributes=attributes,
                                         subjects_awarded=["s2", "s1"])]}
    (record,) = _revert(history, live).records()
    assert record.payload == {"custom_attributes": {"Faculty": "Arts", "Other": "kept"}, "subjects_awarded": ["s1"]}


def test_a_label_taken_out_stays_out_while_the_next_is_put_back(tmp_path: Path) -> None:
    history = _history(tmp_path)
    _apply(history, [("update", "arrangement", ("A1",), "id-A1", [
        FieldWrite("custom_attributes.Added", OWNER, after="new", before=None),
        FieldWrite("custom_attributes.Dropped", OWNER, after=None, before="old"),
    ])])
    live = {"arrangement": [_arrangement("A1", "DRAFT", "x", custom_attributes={"Added": "new"})]}
    (record,) = _revert(history, live).records()
    assert record.payload == {"custom_attributes": {"Dropped": "old"}}


def test_records_gone_live_and_lost_answers_are_said(tmp_path: Path) -> None:
    history = _history(tmp_path)
    _apply(history, [
        ("update", "arrangement", ("A1",), "id-A1", [FieldWrite("name", OWNER, after="New", before="Old")]),
        ("update", "arrangement", ("A2",), "id-A2", [FieldWrite("name", OWNER, after="New", before="Old")]),
        ("lost", "arrangement", ("A2",), "id-A2", []),
    ])
    plan = _revert(history, {"arrangement": [_arrangement("A2", "DRAFT", "New")]})
    (record,) = plan.records()
    assert record.key == ("A2",)
    messages = _messages(plan)
    assert messages[0] == "arrangement A1 (id id-A1): no longer in the service: nothing to put back"
    assert "answer to a write of this apply was lost" in messages[1]


def test_the_last_apply_that_wrote_is_the_default_and_an_unknown_id_is_refused(tmp_path: Path) -> None:
    history = _history(tmp_path)
    first = _apply(history, [("update", "arrangement", ("A1",), "id-A1",
                              [FieldWrite("name", OWNER, after="B", before="A")])])
    _apply(history, [("update", "arrangement", ("A1",), "id-A1", [FieldWrite("name", OWNER, after="C", before="B")])])
    _apply(history, [("confirm", "arrangement", ("A1",), "id-A1", [FieldWrite("name", OWNER, after="C")])])
    live = {"arrangement": [_arrangement("A1", "DRAFT", "C")]}
    assert _revert(history, live).records()[0].payload == {"name": "B"}
    assert _revert(history, live, first).records() == ()  # "B" was changed since, by the second apply
    with pytest.raises(HistoryError, match="no apply 'nope'"):
        _revert(history, live, "nope")


def test_a_revert_is_deterministic(tmp_path: Path) -> None:
    history = _history(tmp_path)
    _apply(history, [("update", "arrangement", (f"A{n}",), f"id-A{n}",
                      [FieldWrite("name", OWNER, after=f"N{n}", before=f"O{n}")]) for n in range(5)])
    live = {"arrangement": [_arrangement(f"A{n}", "DRAFT", f"N{n}") for n in reversed(range(5))]}
    assert _revert(history, live) == _revert(history, live)
    assert [r.key for r in _revert(history, live).records()] == [(f"A{n}",) for n in range(5)]


def test_an_applied_revert_records_skips_that_hold_the_next_plan_from_redoing_it(tmp_path: Path) -> None:
    history = _history(tmp_path)
    label = "custom_attributes.Faculty"
    _apply(history, [
        ("update", "arrangement", ("A1",), "id-A1", [FieldWrite("name", OWNER, after="New", before="Old")]),
        ("update", "arrangement", ("A1",), "id-A1", [FieldWrite("status", OWNER, after="READY", before="DRAFT")]),
        ("update", "course", ("C1",), "id-C1", [FieldWrite(label, COURSES, after="Law", before="Arts")]),
    ])
    live = {"arrangement": [_arrangement("A1", "READY", "New")],
            "course": [{"id": "id-C1", "code": "C1", "custom_attributes": {"Faculty": "Law"}}]}
    plan = _revert(history, live)
    results = Results("sandbox", "sandbox", tuple(
        RecordResult(r.ref, r.block, r.entity, r.key, Outcome.UPDATED, "") for r in plan.records()))
    today = date(2026, 11, 25)
    decisions = revert_decisions(plan, results, PROFILE, by="ann", today=today)
    assert {(d.entity, d.key, d.field, d.decision) for d in decisions} == {
        ("arrangement", '["A1"]', "name", Kind.SKIP), ("arrangement", '["A1"]', "status", Kind.SKIP),
        ("course", '["C1"]', label, Kind.SKIP)}
    held = Decisions(tuple(decisions))
    digester = Digester()

    def proposed(entity: str, key: str, field: str, value: Any) -> ProposedChange:
        return ProposedChange("sandbox", entity, f'["{key}"]', field, digester.value(entity, (key,), field, value))

    # The next plan proposes again what the reverted apply wrote (a status one step at a time): held.
    for change in (proposed("arrangement", "A1", "name", "New"), proposed("arrangement", "A1", "status", "READY"),
                   proposed("course", "C1", label, "Law")):
        assert match_decisions(held, change, today) is not None, change
    # Once the sheet says something else, it is proposed again.
    assert match_decisions(held, proposed("arrangement", "A1", "name", "Newer"), today) is None

    assert record_revert_decisions(plan, results, PROFILE, project_dir=tmp_path, by="ann", today=today) == 3
    assert read_decisions(tmp_path / "decisions.yaml") == Decisions(tuple(sorted(decisions, key=sort_key)))
    failed = Results("sandbox", "sandbox", tuple(replace(r, outcome=Outcome.FAILED) for r in results.records))
    assert revert_decisions(plan, failed, PROFILE, by="ann", today=today) == []
    not_a_revert = replace(plan, revert_of=None)
    assert record_revert_decisions(not_a_revert, results, PROFILE, project_dir=tmp_path / "x", by="a", today=today) == 0
    assert not (tmp_path / "x").exists()
