"""One notion of the same value: rows of one key agree, blocks merge and the plan compares by it."""

from __future__ import annotations

from datetime import date, datetime

from loader.source.equality import first_difference, same_source_value
from loader.source.records import Ref


def test_values_spelt_differently_are_the_same_and_different_values_are_not() -> None:
    assert same_source_value("101", 101) and same_source_value(6.0, 6) and same_source_value("", None)
    assert same_source_value(date(2027, 2, 1), datetime(2027, 2, 1))
    assert same_source_value("2027-02-01", date(2027, 2, 1))
    assert not same_source_value("101", "0101") and not same_source_value("A", "a")


def test_references_and_lists_are_compared_exactly_in_the_source_order() -> None:
    ref = Ref("school", ("SCI",))
    assert same_source_value(ref, Ref("school", ("SCI",))) and not same_source_value(ref, "SCI")
    assert same_source_value(["a", "b"], ("a", "b")) and not same_source_value(["a", "b"], ["b", "a"])


def test_the_first_difference_names_a_field_or_a_label_and_a_field_one_row_lacks_differs() -> None:
    row = {"code": "SCI", "name": "Science", "custom_attributes": {"Faculty": "F1", "Campus": "A"}}
    assert first_difference(row, {**row, "name": "Science"}) is None
    assert first_difference(row, {**row, "code": 101}) == "code"
    assert first_difference(row, {**row, "custom_attributes": {"Faculty": "F1", "Campus": "B"}}) == (
        "custom_attributes.Campus"
    )
    assert first_difference(row, {k: v for k, v in row.items() if k != "name"}) == "name"
    assert first_difference({"n": 6}, {"n": "6"}) is None  # what the plan would call the same value


def test_a_label_one_row_lacks_is_named_by_its_label_so_a_pii_label_stays_masked() -> None:
    with_label = {"code": "S1", "custom_attributes": {"Tfn": "123-456-789"}}
    assert first_difference(with_label, {"code": "S1"}) == "custom_attributes.Tfn"
    assert first_difference({"code": "S1"}, with_label) == "custom_attributes.Tfn"
