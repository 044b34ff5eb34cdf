"""The planner's fast makers of plan values give the very values the dataclasses' constructors give."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from loader.places import CellRef
from loader.plan.model import Action, FieldChange, PendingId, RecordPlan, field_change, record_plan


def test_record_plan_fills_every_field_in_order_as_the_constructor_does() -> None:
    values: dict[str, Any] = dict(
        ref="schools/SCI", block="schools", entity="school", key=("SCI",), action=Action.UPDATE,
        payload={"name": "Science", "parent": {"id": PendingId("x/1")}}, source=CellRef("a.xlsx", "S", None, 2),
        live_id="s-1", live_updated_time=5, changes=(FieldChange("name", "Sci", "Science"),), status_path=("A",),
        depends_on=("x/1",), findings=(), row=2, refers_to=("y/2",), also_rows=(("other", 3),),
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


def _slots(value: Any) -> list[tuple[str, Any]]:
    """Every field of a dataclass value, in order, read from its slots."""
    return [(f.name, getattr(value, f.name)) for f in fields(value)]
