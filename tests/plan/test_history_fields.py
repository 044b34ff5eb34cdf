"""One record against its history line, pure: set-like lists element by element, personal fields
without values, and W after for what the apply journals."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from loader.history.digests import Digester
from loader.history.lines import FieldMark, HistoryLine, Owner, line_digest
from loader.places import CellRef
from loader.plan.history_fields import three_way_record
from loader.plan.masking import HIDDEN
from loader.plan.model import Action, FieldChange, RecordPlan
from loader.plan.record_work import RecordContext
from loader.plan.three_way import Policy
from loader.profile import load_profile
from loader.source.records import DesiredRecord

PROFILE = load_profile()
OWNER = Owner("arrangements.yaml", "arrangements")
ROW = CellRef("arrangements.xlsx", "Arrangements", None, 2)
DIGESTER = Digester()


def _plan(entity: str, key: tuple[str, ...], payload: dict[str, Any], live: dict[str, Any]) -> RecordPlan:
    changes = tuple(FieldChange(name, live.get(name), value) for name, value in payload.items())
    return RecordPlan(f"b/{key[0]}", "b", entity, key, Action.UPDATE, payload, ROW, live_id="id-1",
                      changes=changes)


def _line(entity: str, key: tuple[str, ...], **loaded: Any) -> HistoryLine:
    marks = {name: FieldMark(OWNER, DIGESTER.written(entity, key, name, value,
                                                     as_set=name in PROFILE.entity(entity).set_fields))
             for name, value in loaded.items()}
    return HistoryLine(str(key), "id-1", 1, "loader", marks)


def _compare(plan: RecordPlan, live: dict[str, Any], desired: DesiredRecord, line: HistoryLine,
             policy: Policy = Policy.KEEP) -> RecordPlan:
    policies = {name: policy for name in desired.fields}
    return three_way_record(plan, live, desired, line, DIGESTER.record(plan.entity, plan.key),
                            PROFILE.entity(plan.entity), RecordContext(OWNER, policies=policies))


def test_a_set_keeps_the_elements_the_platform_added_and_sends_the_sheets() -> None:
    key = ("AR1",)
    live = {"code": "AR1", "subjects_awarded": ["A", "B", "Y"],
            "metadata": {"updated": {"time": 5, "user": {"id": "p"}}}}
    desired = DesiredRecord("b", "arrangement", key, {"code": "AR1", "subjects_awarded": ["A", "B", "X"]}, ROW)
    plan = _plan("arrangement", key, {"subjects_awarded": ["A", "B", "X"]}, live)
    line = _line("arrangement", key, code="AR1", subjects_awarded=["A", "B"])
    got = _compare(plan, live, desired, line)
    assert sorted(got.payload["subjects_awarded"]) == ["A", "B", "X", "Y"]  # the sheet's X, the platform's Y kept
    assert [(k.field, k.changed_by, k.changed_at) for k in got.kept] == [("subjects_awarded", "p", 5)]
    written = dict(got.written_after)["subjects_awarded"]
    assert set(written) == DIGESTER.elements("arrangement", key, "subjects_awarded", ["A", "B", "X"])
    sheet_wins = _compare(plan, live, desired, line, Policy.SHEET)
    assert sorted(sheet_wins.payload["subjects_awarded"]) == ["A", "B", "X"] and not sheet_wins.kept


def test_personal_fields_show_no_value_in_kept_edits_and_conflicts() -> None:
    key = ("AR2",)
    live = {"code": "AR2", "name": "Edited", "metadata": {"updated": {"time": 9, "user": {"id": "p"}}}}
    desired = DesiredRecord("b", "arrangement", key, {"code": "AR2", "name": "Third"}, ROW, pii=frozenset({"name"}))
    plan = _plan("arrangement", key, {"name": "Third"}, live)
    got = _compare(plan, live, desired, _line("arrangement", key, code="AR2", name="Loaded"))
    [conflict] = got.conflicts
    assert (conflict.sheet, conflict.live, conflict.last_loaded, conflict.pii) == (HIDDEN, HIDDEN, None, True)
    assert got.action is Action.UNCHANGED and not got.payload and not got.changes


def test_a_field_equal_to_the_sheet_whose_w_is_not_live_is_confirmed() -> None:
    key = ("AR3",)
    live = {"code": "AR3", "name": "Caught up"}
    desired = DesiredRecord("b", "arrangement", key, {"code": "AR3", "name": "Caught up"}, ROW)
    plan = RecordPlan("b/AR3", "b", "arrangement", key, Action.UNCHANGED, {}, ROW, live_id="id-1")
    got = _compare(plan, live, desired, _line("arrangement", key, code="AR3", name="Old"))
    assert got.confirmed == ("name",) and dict(got.written_after) == {
        "name": DIGESTER.value("arrangement", key, "name", "Caught up")}


@given(st.sampled_from(["a", "b", "c"]), st.sampled_from(["a", "b", "c"]), st.sampled_from(["a", "b", "c"]),
       st.sampled_from(list(Policy)))
def test_a_platform_edit_is_never_overwritten_unless_the_sheet_wins(sheet: str, live: str, loaded: str,
                                                                     policy: Policy) -> None:
    key = ("AR9",)
    live_record = {"code": "AR9", "name": live}
    desired = DesiredRecord("b", "arrangement", key, {"code": "AR9", "name": sheet}, ROW)
    payload = {} if sheet == live else {"name": sheet}
    plan = _plan("arrangement", key, payload, live_record)
    got = _compare(plan, live_record, desired, _line("arrangement", key, code="AR9", name=loaded), policy)
    edited = live != loaded
    if edited and policy is not Policy.SHEET:
        assert "name" not in got.payload  # kept, or held as a conflict
        assert bool(got.kept or got.conflicts) == (sheet != live)
    else:
        assert got.payload == payload and not got.kept and not got.conflicts


@given(st.sampled_from(["live", "other", "none"]), st.sampled_from(["live", "other", "none"]))
def test_a_record_the_sheet_leaves_as_it_is_confirms_exactly_the_fields_whose_w_is_not_live(
        name_mark: str, set_mark: str) -> None:
    key = ("AR4",)
    fields = {"code": "AR4", "name": "Kept", "subjects_awarded": ["A", "B"]}
    other = {"code": "AR4", "name": "Before", "subjects_awarded": ["A"]}
    live = dict(fields)
    desired = DesiredRecord("b", "arrangement", key, dict(fields), ROW)
    plan = RecordPlan("b/AR4", "b", "arrangement", key, Action.UNCHANGED, {}, ROW, live_id="id-1")
    marked = {"name": name_mark, "subjects_awarded": set_mark}
    loaded = {"code": "AR4", **{n: (fields if m == "live" else other)[n] for n, m in marked.items() if m != "none"}}
    line = _line("arrangement", key, **loaded)
    got = _compare(plan, live, desired, line)
    stale = sorted(n for n, m in marked.items() if m != "live")
    assert got.confirmed == tuple(stale) and [n for n, _ in got.written_after] == stale
    assert got.action is Action.UNCHANGED and not got.payload and not got.kept and not got.conflicts
    assert got.history_line == line_digest(line)
