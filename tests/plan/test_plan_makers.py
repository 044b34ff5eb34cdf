"""The planner's fast makers of plan values give the very values the dataclasses' constructors give."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from loader.findings import Finding
from loader.places import CellRef
from loader.plan.makers import field_change, record_plan
from loader.plan.model import Action, FieldChange, FieldOutcome, PendingId, RecordPlan


def test_record_plan_fills_every_field_in_order_as_the_constructor_does() -> None:
    values: dict[str, Any] = dict(
        ref="schools/SCI", block="schools", entity="school", key=("SCI",), action=Action.UPDATE,
        payload={"name": "Science", "parent": {"id": PendingId("x/1")}}, source=CellRef("a.xlsx", "S", None, 2),
        live_id="s-1", live_updated_time=5, changes=(FieldChange("name", "Sci", "Science"),), status_path=("A",),
        depends_on=("x/1",), findings=(), row=2, refers_to=("y/2",), also_rows=(("other", 3),),
        history_line="0123456789abcdef", kept=(FieldOutcome("name", "A", "B", "A", "u-1", 7),),
        conflicts=(FieldOutcome("code", pii=True),), confirmed=("status",),
        written_after=(("name", "Ww3v"), ("tags", ("a", "b"))),
    )
    made = record_plan(*(values[f.name] for f in fields(RecordPlan) if f.name != "blocked"))
    built = RecordPlan(**values)
    assert made == built and repr(made) == repr(built) and hash(made.key) == hash(built.key)
    assert _slots(made) == _slots(built)
    assert made.blocked is False


def test_field_change_fills_every_field_in_order_as_the_constructor_does() -> None:
    for made, built in [(field_change("name", None, "x", True), FieldChange("name", None, "x", True)),
                        (field_change("status", "A", "B"), FieldChange("status", "A", "B"))]:
        assert made == built and repr(made) == repr(built)
        assert _slots(made) == _slots(built)


_texts = st.text(max_size=4)
_values = st.none() | st.booleans() | st.integers() | _texts | st.builds(PendingId, _texts)
_changes = st.builds(FieldChange, _texts, _values, _values, st.booleans())
_findings = st.builds(Finding, st.sampled_from(["error", "warning"]), _texts, _texts, st.none())
_outcomes = st.builds(FieldOutcome, _texts, _values, _values, _values, st.none() | _texts,
                      st.none() | st.integers(), st.booleans(), st.booleans())
_record_values = st.fixed_dictionaries({
    "ref": _texts, "block": _texts, "entity": _texts, "key": st.tuples(_texts) | st.tuples(_texts, _values),
    "action": st.sampled_from(Action), "payload": st.dictionaries(_texts, _values, max_size=3),
    "source": st.builds(CellRef, _texts, st.none() | _texts, st.none() | _texts, st.none() | st.integers(1, 9)),
    "live_id": st.none() | _texts, "live_updated_time": st.none() | st.integers(),
    "changes": st.tuples() | st.tuples(_changes) | st.tuples(_changes, _changes),
    "status_path": st.lists(_texts, max_size=2).map(tuple), "depends_on": st.lists(_texts, max_size=2).map(tuple),
    "findings": st.lists(_findings, max_size=2).map(tuple), "row": st.none() | st.integers(1, 99),
    "refers_to": st.lists(_texts, max_size=2).map(tuple),
    "also_rows": st.lists(st.tuples(_texts, st.integers(1, 99)), max_size=2).map(tuple),
    "history_line": st.none() | _texts, "kept": st.tuples() | st.tuples(_outcomes),
    "conflicts": st.tuples() | st.tuples(_outcomes), "confirmed": st.lists(_texts, max_size=2).map(tuple),
    "written_after": st.lists(st.tuples(_texts, _texts | st.lists(_texts, max_size=2).map(tuple)),
                              max_size=2).map(tuple),
})


@given(_record_values)
def test_record_plan_is_the_constructors_value_for_any_values(values: dict[str, Any]) -> None:
    made = record_plan(*(values[f.name] for f in fields(RecordPlan) if f.name != "blocked"))
    built = RecordPlan(**values)
    assert made == built and repr(made) == repr(built)
    assert _slots(made) == _slots(built)


@given(_texts, _values, _values, st.booleans())
def test_field_change_is_the_constructors_value_for_any_values(name: str, old: Any, new: Any, pii: bool) -> None:
    made, built = field_change(name, old, new, pii), FieldChange(name, old, new, pii)
    assert made == built and repr(made) == repr(built)
    assert _slots(made) == _slots(built)


def _slots(value: Any) -> list[tuple[str, Any]]:
    """Every field of a dataclass value, in order, read from its slots."""
    return [(f.name, getattr(value, f.name)) for f in fields(value)]
