from __future__ import annotations

import heapq

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.apply.graph import ReadyRecords, Scheduler, build_graph
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
    graph = build_graph(records, ("school", "course", "subject"))
    order = graph.order()
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
    scheduler = Scheduler(graph)
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
    graph = build_graph([_record("s1", "school"), _record("c1", "course"), _record("c2", "course", ("s1",))])
    scheduler = Scheduler(graph)
    first_wave = {scheduler.next_ready(), scheduler.next_ready()}
    assert first_wave == {"s1", "c1"}
    assert scheduler.next_ready() is None
    scheduler.succeeded("s1")
    assert scheduler.next_ready() == "c2"


def test_ready_records_come_in_creation_order_of_their_entity() -> None:
    graph = build_graph([_record("sub", "subject"), _record("sch", "school"), _record("crs", "course")],
                        ("school", "course", "subject"))
    assert graph.order() == ("sch", "crs", "sub")


def test_a_dependency_cycle_is_a_plan_error_naming_the_records() -> None:
    with pytest.raises(PlanError, match="cycle: a, b"):
        build_graph([_record("a", depends_on=("b",)), _record("b", depends_on=("a",))])


def test_a_ref_repeated_in_the_plan_is_a_plan_error() -> None:
    with pytest.raises(PlanError, match="twice"):
        build_graph([_record("a"), _record("a")])


def test_a_dependency_outside_the_plan_is_reported_missing() -> None:
    graph = build_graph([_record("a", depends_on=("elsewhere",))])
    assert graph.missing == {"a": ("elsewhere",)}
    assert graph.order() == ("a",)


def test_withdrawing_before_dispatch_keeps_the_record_and_its_dependants_back() -> None:
    graph = build_graph([_record("a"), _record("b", depends_on=("a",)), _record("c")])
    scheduler = Scheduler(graph)
    assert scheduler.withdraw(["a"]) == {"a", "b"}
    assert scheduler.next_ready() == "c"
    assert scheduler.next_ready() is None


def test_pending_lists_what_was_never_dispatched_in_plan_order() -> None:
    graph = build_graph([_record("a"), _record("b", depends_on=("a",)), _record("c")])
    scheduler = Scheduler(graph)
    assert scheduler.next_ready() == "a"
    assert scheduler.pending() == ("b", "c")


@settings(max_examples=200, deadline=None)
@given(
    start=st.sets(st.integers(0, 200), max_size=30),
    steps=st.lists(st.one_of(st.none(), st.integers(0, 200)), max_size=60),
)
def test_ready_records_come_lowest_rank_first_as_from_one_heap(start: set[int], steps: list[int | None]) -> None:
    """The queue-and-heap hands out exactly what one heap of every ready record would (None: take one)."""
    walk = ReadyRecords([(rank, f"r{rank}") for rank in start])
    heap = [(rank, f"r{rank}") for rank in start]
    heapq.heapify(heap)
    seen = set(start)
    for step in steps:
        if step is None:
            assert walk.next_ready() == (heapq.heappop(heap)[1] if heap else None)
        elif step not in seen:  # ranks are unique in a walk
            seen.add(step)
            walk._push(step, f"r{step}")
            heapq.heappush(heap, (step, f"r{step}"))
        assert walk.ready_count() == len(heap)
    assert [walk.next_ready() for _ in heap] == [ref for _, ref in sorted(heap)]
