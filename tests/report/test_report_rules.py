"""Rule groups: every changed field of every record in exactly one group; every record the summary
counts as a change in at least one; samples that do not churn."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from loader.places import CellRef
from loader.plan.model import Action, BlockPlan, FieldChange, FieldRule, RecordPlan
from loader.report.rules import STATUS_STEPS, rule_groups, sample
from loader.report.view import counts, is_blocked

FIELDS = ("code", "name", "parent", "status", "custom_attributes.Level")


@st.composite
def records(draw: st.DrawFn) -> tuple[RecordPlan, ...]:
    made = []
    for n in range(draw(st.integers(0, 25))):
        action = draw(st.sampled_from(Action))
        fields = draw(st.lists(st.sampled_from(FIELDS), unique=True, max_size=len(FIELDS)))
        if action is Action.UNCHANGED:
            fields = []
        old = None if action is Action.CREATE else "old"
        values = st.sampled_from(["", "a", "b"])
        changes = tuple(FieldChange(f, old, draw(values), pii=draw(st.booleans()) and f == "name") for f in fields)
        status_path = tuple(draw(st.lists(st.sampled_from(["READY", "ACTIVE"]), max_size=2)))
        made.append(RecordPlan(
            ref=f"b/K{n}", block="b", entity="subject", key=(f"K{n}",), action=action, payload={},
            source=CellRef("intake.xlsx", "S", row=n + 2), row=n + 2, changes=changes, status_path=status_path,
            blocked=draw(st.booleans()) and draw(st.booleans())))
    return tuple(made)


@settings(max_examples=150, deadline=None)
@given(records(), st.lists(st.sampled_from(FIELDS), unique=True))
def test_every_changed_field_is_in_exactly_one_group_and_every_counted_change_in_one(
    planned: tuple[RecordPlan, ...], ruled: list[str]
) -> None:
    rules = tuple(FieldRule(f, f"mappings/units.yaml:{20 + n}", f"{f} ← column '{f}'") for n, f in enumerate(ruled))
    block = BlockPlan("b", "subject", "intake.xlsx", "S", planned, field_rules=rules)
    groups = rule_groups(block)
    placed = Counter((id(r), g.field) for g in groups for r in g.records)
    assert all(n == 1 for n in placed.values())  # no record twice in one group, no field in two groups
    for record in planned:
        if is_blocked(record) or not record.has_changes:
            assert not any((id(record), f) in placed for f in (*FIELDS, STATUS_STEPS))
            continue
        for change in record.changes:
            assert placed[(id(record), change.field)] == 1
    in_a_group = {id(r) for g in groups for r in g.records}
    counted = [r for r in planned if not is_blocked(r) and r.action is not Action.UNCHANGED]
    assert len(counted) == counts(block).create + counts(block).update
    assert all(id(r) in in_a_group for r in counted)
    for g in groups:
        assert (g.place != "") == (g.field in ruled)
        assert g.kind == ("create" if g.records[0].action is Action.CREATE else "update")
        if g.profile is not None:
            assert g.profile.with_value + g.profile.empty == counts(block).create


def test_a_sample_is_the_same_whatever_the_order_and_the_other_records() -> None:
    def record(n: int) -> RecordPlan:
        return RecordPlan(ref=f"b/K{n}", block="b", entity="subject", key=(f"K{n}",), action=Action.CREATE,
                          payload={}, source=CellRef("intake.xlsx", "S", row=n), row=n)

    every = [record(n) for n in range(1_000)]
    first = [r.ref for r in sample(every)]
    assert len(first) == 10 and [r.ref for r in sample(reversed(every))] == first
    # a record added whose hash is not among the 10 smallest leaves the sample as it was
    more = [r.ref for r in sample([*every, record(5_000)])]
    assert more == first or "b/K5000" in more


def test_the_mapping_lines_are_not_part_of_the_digest() -> None:
    from dataclasses import replace

    from helpers.large_plans import cycle

    from loader.plan.digest import plan_digest

    plan = cycle(70)
    moved = replace(plan, blocks=tuple(replace(b, field_rules=tuple(replace(r, place=r.place + "0")
                                                                    for r in b.field_rules)) for b in plan.blocks))
    bare = replace(plan, blocks=tuple(replace(b, field_rules=()) for b in plan.blocks))
    assert plan_digest(plan) == plan_digest(moved) == plan_digest(bare)
    assert [g.place for g in rule_groups(moved.blocks[0])][:1] == ["mappings/units.yaml:260"]


def test_a_key_that_is_not_valid_unicode_still_has_a_sample_hash() -> None:
    from loader.report.rules import key_hash

    record = RecordPlan(ref="b/K\udcff", block="b", entity="subject", key=("K\udcff",), action=Action.CREATE,
                        payload={}, source=CellRef("intake.xlsx", "S", row=2), row=2)
    assert len(key_hash(record)) == 8 and sample([record]) == [record]
