from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.apply.graph import Scheduler, build_graph
from loader.errors import PlanError
from loader.places import CellRef
from loader.plan.model import Action, RecordPlan


def _record(ref: str, entity: str = "course", depends_on: tuple[str, ...] = ()) -> RecordPlan:
    return RecordPlan(
        ref=ref,
        block=entity,
        entity=entity,
        key=(ref,),
        action=Action.CREATE,
        payload={"code": ref},
        source=CellRef("sheet", ref),
        depends_on=depends_on,
    )


def _scheduler(records: list[RecordPlan], creation_order: tuple[str, ...] = ()) -> Scheduler:
    """The walk of a whole plan's records, as the executor makes it."""
    build_graph(records, creation_order)
    scheduler = Scheduler(creation_order)
    scheduler.add(records, absent_ok=True)
    return scheduler


def _order(records: list[RecordPlan], creation_order: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The dispatch order when every write succeeds."""
    scheduler = _scheduler(records, creation_order)
    out: list[str] = []
    while (ref := scheduler.next_ready()) is not None:
        out.append(ref)
        scheduler.succeeded(ref)
    return tuple(out)


@st.composite
def _acyclic_records(draw: st.DrawFn) -> list[RecordPlan]:
    """Records whose dependencies only point at earlier records, listed in a shuffled order."""
    count = draw(st.integers(min_value=1, max_value=25))
    entities = ("school", "course", "subject")
    records = []
    for i in range(count):
        deps = draw(st.sets(st.integers(min_value=0, max_value=i - 1), max_size=3)) if i else set()
        records.append(_record(f"r{i}", draw(st.sampled_from(entities)), tuple(f"r{d}" for d in sorted(deps))))
    return draw(st.permutations(records))


@settings(max_examples=50, deadline=None)
@given(_acyclic_records())
def test_dispatch_order_puts_every_record_after_what_it_depends_on(records: list[RecordPlan]) -> None:
    order = _order(records, ("school", "course", "subject"))
    assert sorted(order) == sorted(r.ref for r in records)
    position = {ref: i for i, ref in enumerate(order)}
    for record in records:
        for dep in record.depends_on:
            assert position[dep] < position[record.ref]


@settings(max_examples=50, deadline=None)
@given(_acyclic_records(), st.data())
def test_a_failed_record_withdraws_exactly_its_transitive_dependants(
    records: list[RecordPlan], data: st.DataObject
) -> None:
    graph = build_graph(records)
    scheduler = _scheduler(records)
    failing = data.draw(st.sampled_from([r.ref for r in records]))
    dispatched: list[str] = []
    withdrawn: set[str] = set()
    while (ref := scheduler.next_ready()) is not None:
        dispatched.append(ref)
        if ref == failing:
            withdrawn |= scheduler.failed(ref)
        else:
            scheduler.succeeded(ref)
    expected = graph.dependants_of([failing])
    assert withdrawn == expected
    assert set(dispatched) == {r.ref for r in records} - expected
    assert scheduler.next_ready() is None and scheduler.pending() == ()


def test_records_of_different_entities_are_ready_together_when_independent() -> None:
    scheduler = _scheduler([_record("s1", "school"), _record("c1", "course"), _record("c2", "course", ("s1",))])
    first_wave = {scheduler.next_ready(), scheduler.next_ready()}
    assert first_wave == {"s1", "c1"}
    assert scheduler.next_ready() is None
    scheduler.succeeded("s1")
    assert scheduler.next_ready() == "c2"


def test_ready_records_come_in_creation_order_of_their_entity() -> None:
    records = [_record("sub", "subject"), _record("sch", "school"), _record("crs", "course")]
    assert _order(records, ("school", "course", "subject")) == ("sch", "crs", "sub")


def test_a_dependency_cycle_is_a_plan_error_naming_the_records() -> None:
    with pytest.raises(PlanError, match="cycle: a, b"):
        build_graph([_record("a", depends_on=("b",)), _record("b", depends_on=("a",))])


def test_a_ref_repeated_in_the_plan_is_a_plan_error() -> None:
    with pytest.raises(PlanError, match="twice"):
        build_graph([_record("a"), _record("a")])


def test_a_dependency_outside_the_plan_is_reported_missing() -> None:
    graph = build_graph([_record("a", depends_on=("elsewhere",))])
    assert graph.missing == {"a": ("elsewhere",)}
    assert _order([_record("a", depends_on=("elsewhere",))]) == ("a",)


def test_withdrawing_before_dispatch_keeps_the_record_and_its_dependants_back() -> None:
    scheduler = _scheduler([_record("a"), _record("b", depends_on=("a",)), _record("c")])
    assert scheduler.withdraw(["a"]) == {"a", "b"}
    assert scheduler.next_ready() == "c"
    assert scheduler.next_ready() is None


def test_pending_lists_what_was_never_dispatched_in_plan_order() -> None:
    scheduler = _scheduler([_record("a"), _record("b", depends_on=("a",)), _record("c")])
    assert scheduler.next_ready() == "a"
    assert scheduler.pending() == ("b", "c")
