"""The three-way compare: every case of the table under every policy, sets per element, labels per label."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loader.history.digests import Digester
from loader.plan.three_way import (
    Outcome,
    Policy,
    compare_labels,
    compare_set,
    compare_value,
    history_is_behind,
    is_another_database,
)

D = Digester()


def w(value: Any) -> str:
    return D.value("programs", ("P1",), "name", value)


def el(item: Any) -> str:
    return D.element("programs", ("P1",), "tags", item)


def ws(*items: Any) -> frozenset[str]:
    return frozenset(el(i) for i in items)


# (sheet, live, last written) -> outcome per policy (keep, sheet, platform)
TABLE = [
    ("sheet changed", "new", "old", "old", (Outcome.UPDATE, Outcome.UPDATE, Outcome.UPDATE)),
    ("platform edit", "old", "edited", "old", (Outcome.KEPT, Outcome.UPDATE, Outcome.KEPT)),
    ("conflict", "new", "edited", "old", (Outcome.CONFLICT, Outcome.UPDATE, Outcome.KEPT)),
    ("platform caught up", "new", "new", "old", (Outcome.UNCHANGED,) * 3),
    ("all equal", "same", "same", "same", (Outcome.UNCHANGED,) * 3),
]


@pytest.mark.parametrize("policy_index, policy", list(enumerate(Policy)))
@pytest.mark.parametrize("case, sheet, live, last, outcomes", TABLE)
def test_each_case_of_the_table_under_each_policy(
    case: str, sheet: str, live: str, last: str, outcomes: tuple[Outcome, ...], policy_index: int, policy: Policy
) -> None:
    verdict = compare_value(sheet, live, w(last), policy, w)
    assert verdict.outcome is outcomes[policy_index], case
    if verdict.outcome is Outcome.UPDATE:
        assert verdict.send == sheet and verdict.written_after == w(sheet)
    else:
        assert verdict.send is None
    if verdict.outcome in (Outcome.KEPT, Outcome.CONFLICT):
        assert verdict.written_after is None and verdict.platform_edit


def test_unchanged_moves_w_to_live_only_when_it_differs() -> None:
    caught_up = compare_value("new", "new", w("old"), Policy.KEEP, w)
    assert caught_up.written_after == w("new") and caught_up.platform_edit
    equal = compare_value("same", "same", w("same"), Policy.KEEP, w)
    assert equal.written_after is None and not equal.platform_edit


def test_values_are_compared_normalised() -> None:
    assert compare_value(6, 6.0, w("6"), Policy.KEEP, w).outcome is Outcome.UNCHANGED
    assert compare_value("6", 6.0, w(6), Policy.KEEP, w).written_after is None
    assert compare_value("old", "edited", w("old"), Policy.KEEP, w).outcome is Outcome.KEPT


@pytest.mark.parametrize("policy", list(Policy))
def test_without_history_the_compare_is_two_way(policy: Policy) -> None:
    assert compare_value("new", "old", None, policy, w).outcome is Outcome.UPDATE
    same = compare_value("x", "x", None, policy, w)
    assert same.outcome is Outcome.UNCHANGED and same.written_after == w("x")


def test_a_set_sends_the_sheets_addition_and_keeps_the_platforms_under_keep() -> None:
    verdict = compare_set(["A", "X"], ["A", "Y"], ws("A"), Policy.KEEP, el)
    assert verdict.outcome is Outcome.UPDATE
    assert verdict.send == ("A", "X", "Y")
    assert verdict.added == ("X",) and verdict.removed == () and verdict.kept_added == ("Y",)
    assert verdict.written_after == ws("A", "X")  # Y stays the platform's: not marked as written


def test_a_set_under_sheet_overwrites_the_platforms_elements() -> None:
    verdict = compare_set(["A", "X"], ["A", "Y"], ws("A"), Policy.SHEET, el)
    assert verdict.send == ("A", "X") and verdict.removed == ("Y",) and verdict.kept_added == ()
    assert verdict.written_after == ws("A", "X")


def test_a_set_under_platform_keeps_the_platforms_elements() -> None:
    verdict = compare_set(["A", "X"], ["A", "Y"], ws("A"), Policy.PLATFORM, el)
    assert verdict.send == ("A", "X", "Y") and verdict.kept_added == ("Y",)


def test_an_element_removed_in_the_platform_stays_removed_under_keep() -> None:
    verdict = compare_set(["A", "B"], ["A"], ws("A", "B"), Policy.KEEP, el)
    assert verdict.outcome is Outcome.KEPT and verdict.kept_removed == ("B",) and verdict.send == ()
    assert verdict.written_after is None  # W keeps B: a later plan still sees the platform's removal
    again = compare_set(["A", "B"], ["A"], ws("A", "B"), Policy.KEEP, el)
    assert again.outcome is Outcome.KEPT


def test_an_element_removed_in_the_sheet_is_removed() -> None:
    verdict = compare_set(["A"], ["A", "B"], ws("A", "B"), Policy.KEEP, el)
    assert verdict.outcome is Outcome.UPDATE and verdict.send == ("A",) and verdict.removed == ("B",)
    assert verdict.written_after == ws("A")


def test_a_set_without_history_sends_the_sheet() -> None:
    verdict = compare_set(["A", "X"], ["A", "Y"], None, Policy.KEEP, el)
    assert verdict.send == ("A", "X") and verdict.written_after == ws("A", "X")


def test_an_equal_set_is_unchanged_in_any_order() -> None:
    verdict = compare_set(["B", "A"], ("A", "B"), ws("A", "B"), Policy.KEEP, el)
    assert verdict.outcome is Outcome.UNCHANGED and verdict.written_after is None


def label(name: str, value: Any) -> str:
    return D.value("programs", ("P1",), f"custom_attributes.{name}", value)


def test_labels_are_compared_label_by_label() -> None:
    written = {"Campus": label("Campus", "North"), "Level": label("Level", "1"), "Mode": label("Mode", "Full")}
    sheet = {"Campus": "South", "Level": "1", "Mode": "Part"}
    live = {"Campus": "North", "Level": "2", "Mode": "Evening", "Other": "kept"}
    verdict = compare_labels(sheet, live, written, Policy.KEEP, label)
    assert verdict.labels["Campus"].outcome is Outcome.UPDATE
    assert verdict.labels["Level"].outcome is Outcome.KEPT
    assert verdict.labels["Mode"].outcome is Outcome.CONFLICT
    assert verdict.send == {"Campus": "South", "Level": "2", "Mode": "Evening", "Other": "kept"}


def test_a_label_cleared_in_the_sheet_is_removed_and_no_update_sends_nothing() -> None:
    written = {"Campus": label("Campus", "North")}
    cleared = compare_labels({"Campus": ""}, {"Campus": "North", "X": "1"}, written, Policy.KEEP, label)
    assert cleared.send == {"X": "1"}
    same = compare_labels({"Campus": "North"}, {"Campus": "North"}, written, Policy.KEEP, label)
    assert same.send is None and same.labels["Campus"].outcome is Outcome.UNCHANGED


def test_the_history_is_behind_only_for_the_loaders_own_later_writes() -> None:
    own = frozenset({"svc"})
    assert history_is_behind(1000, 2000, "svc", own)
    assert not history_is_behind(1000, 2000, "staff", own)  # a platform edit
    assert not history_is_behind(2000, 2000, "svc", own)
    assert not history_is_behind(None, 2000, "svc", own)


@pytest.mark.parametrize("recorded, missing, another", [
    (0, 0, False), (10, 0, False), (10, 5, False), (10, 6, True), (1, 1, True), (1000, 1000, True),
])
def test_another_database_when_most_recorded_ids_are_missing(recorded: int, missing: int, another: bool) -> None:
    assert is_another_database(recorded, missing) is another


ITEMS = st.frozensets(st.sampled_from(["A", "B", "C", "D"]))


@given(ITEMS, ITEMS, st.none() | ITEMS, st.sampled_from(list(Policy)))
def test_a_set_plan_carried_out_then_planned_again_changes_nothing(
    sheet: frozenset[str], live: frozenset[str], last: frozenset[str] | None, policy: Policy
) -> None:
    written = None if last is None else ws(*last)
    verdict = compare_set(sorted(sheet), sorted(live), written, policy, el)
    after_live = set(verdict.send) if verdict.outcome is Outcome.UPDATE else set(live)
    after_w = verdict.written_after if verdict.written_after is not None else written
    again = compare_set(sorted(sheet), sorted(after_live), after_w, policy, el)
    assert again.outcome is not Outcome.UPDATE
    for item in sheet ^ live:  # the sheet wins wherever the platform did not change the element
        if last is None or (item in live) == (item in last) or policy is Policy.SHEET:
            assert (item in after_live) == (item in sheet)
        else:
            assert (item in after_live) == (item in live)
    for item in sheet & live:
        assert item in after_live
    assert not (after_live - sheet - live)


VALUES = st.sampled_from(["a", "b", "c", None])


@given(VALUES, VALUES, st.none() | VALUES, st.sampled_from(list(Policy)))
def test_a_field_plan_carried_out_then_planned_again_changes_nothing(
    sheet: str | None, live: str | None, last: str | None, policy: Policy
) -> None:
    written = None if last is None else w(last)
    verdict = compare_value(sheet, live, written, policy, w)
    after_live = verdict.send if verdict.outcome is Outcome.UPDATE else live
    after_w = verdict.written_after if verdict.written_after is not None else written
    again = compare_value(sheet, after_live, after_w, policy, w)
    assert again.outcome in (Outcome.UNCHANGED, verdict.outcome) and again.outcome is not Outcome.UPDATE
