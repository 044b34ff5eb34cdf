"""Property: applying a plan's payloads the way the service does, then planning again, shows no change."""

from __future__ import annotations

import copy
from typing import Any

from helpers.plan import Block
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.places import CellRef
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.model import Action, PendingId, Plan
from loader.profile import load_profile
from loader.source.records import DesiredRecord, Ref

PROFILE = load_profile()
CODES = ["SCI", "sci", "ENG", "BUS", "HUM"]
LABELS = ["Faculty", "Campus", "Legacy ID"]
STATUSES = ["DRAFT", "READY", "ACTIVE", "INACTIVE"]


def _desired(block: str, entity: str, row: int, fields: dict[str, Any]) -> DesiredRecord:
    return DesiredRecord(block, entity, (fields["code"],), fields, CellRef("gen.xlsx", block, None, row))


text = st.text(alphabet="ab ", min_size=0, max_size=3)
attrs = st.dictionaries(st.sampled_from(LABELS), st.one_of(st.none(), text), max_size=3)


@st.composite
def worlds(draw: st.DrawFn) -> tuple[list[Block], dict[str, list[dict[str, Any]]]]:
    schools, courses, live_schools, live_courses, arrangements, live_arrangements = [], [], [], [], [], []
    for n, code in enumerate(draw(st.lists(st.sampled_from(CODES), unique=True, min_size=1, max_size=4))):
        in_source, is_live = draw(st.sampled_from([(True, True), (True, False), (False, True)]))
        if in_source:
            fields: dict[str, Any] = {"code": code}
            if draw(st.booleans()):
                fields["name"] = draw(text)
            if draw(st.booleans()):
                fields["custom_attributes"] = draw(attrs)
            schools.append(_desired("schools", "school", n + 2, fields))
            course = {"code": f"C-{code}", "name": draw(text), "parent": Ref("school", (code,))}
            courses.append(_desired("courses", "course", n + 2, course))
        if is_live:
            live_schools.append({"id": f"s-{n}", "code": code, "name": draw(text), "type": "SCHOOL",
                                 "custom_attributes": {k: v for k, v in draw(attrs).items() if v}})
            if draw(st.booleans()):
                live_courses.append({"id": f"c-{n}", "code": f"C-{code}", "name": draw(text), "type": "COURSE",
                                     "parent": {"id": f"s-{n}"}})
    for row, code in enumerate(draw(st.lists(st.sampled_from(["A1", "A2", "A3"]), unique=True)), start=2):
        arrangements.append(_desired("arrangements", "arrangement", row,
                                     {"code": code, "name": "x", "status": draw(st.sampled_from(STATUSES))}))
        if draw(st.booleans()):
            live_arrangements.append({"id": f"r-{code}", "code": code, "name": "x",
                                      "status": draw(st.sampled_from(STATUSES))})
    blocks = [Block("schools", "school", ("code",), tuple(schools)),
              Block("courses", "course", ("code",), tuple(courses)),
              Block("arrangements", "arrangement", ("code",), tuple(arrangements))]
    live: dict[str, list[dict[str, Any]]] = {
        "school": live_schools, "course": live_courses, "arrangement": live_arrangements,
    }
    return blocks, live


def _plan(blocks: list[Block], live: dict[str, list[dict[str, Any]]]) -> Plan:
    return plan_changes(blocks, live, PROFILE, header=PlanHeader("sandbox"))


def _substitute(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, PendingId):
        return ids[value.ref]
    if isinstance(value, dict):
        return {k: _substitute(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, ids) for v in value]
    return value


def _apply_like_the_service(plan: Plan, live: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Creates add a record, PATCH replaces each top-level field sent (None removes it), status steps set it."""
    state = copy.deepcopy(live)
    ids: dict[str, str] = {}
    by_id = {rec["id"]: rec for records in state.values() for rec in records}
    for rec in plan.records():
        if rec.blocked:
            continue
        payload = _substitute(dict(rec.payload), ids)
        if rec.action is Action.CREATE:
            new = {"id": f"new-{rec.ref}", **{k: v for k, v in payload.items() if v is not None}}
            if rec.entity == "arrangement":
                new["status"] = "DRAFT"
            state.setdefault(rec.entity, []).append(new)
            ids[rec.ref] = new["id"]
            by_id[new["id"]] = new
            target = new
        else:
            target = by_id[rec.live_id]
            for name, value in payload.items():
                if value is None:
                    target.pop(name, None)
                else:
                    target[name] = value
        for step in rec.status_path:
            target["status"] = step
    return state


@settings(max_examples=60, deadline=None)
@given(worlds())
def test_applying_a_plan_then_planning_again_shows_no_changes_and_keeps_unmanaged_labels(world: Any) -> None:
    blocks, live = world
    first = _plan(blocks, live)
    after = _apply_like_the_service(first, live)
    second = _plan(blocks, after)
    assert not second.has_changes, [r for r in second.records() if r.has_changes and not r.blocked]
    assert [r.ref for r in second.records()] == [r.ref for r in first.records()]
    managed = {r.key[0]: set(r.fields.get("custom_attributes", {})) for r in blocks[0].records}
    for before in live["school"]:
        now = next(s for s in after["school"] if s["id"] == before["id"])
        labels = managed.get(before["code"], set())
        unmanaged_before = {k: v for k, v in before["custom_attributes"].items() if k not in labels}
        assert {k: v for k, v in now.get("custom_attributes", {}).items() if k not in labels} == unmanaged_before


@settings(max_examples=30, deadline=None)
@given(worlds())
def test_planning_the_same_inputs_twice_gives_equal_plans(world: Any) -> None:
    blocks, live = world
    assert _plan(blocks, live) == _plan(blocks, live)
