"""A number JSON cannot carry (NaN, an infinity: a cell holding 1e999, a database's REAL) anywhere in
any payload is refused, naming its record, field and place, by the checks before the first write
of a plan made now and of a saved plan: never by the encoder in the middle of the apply."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers.report import small_plan

from loader.apply.guards import check_payloads
from loader.apply.prepare import check_new_plan
from loader.errors import PlanError
from loader.plan.model import Plan

NOT_FINITE = [float("inf"), float("-inf"), float("nan")]


def _with_value(value: Any, *, last: bool = True) -> Plan:
    """small_plan with `value` in the payload of its last (or first) record that has a payload."""
    plan = small_plan()
    blocks = list(plan.blocks)
    at = max(i for i, b in enumerate(blocks) if any(r.payload for r in b.records)) if last else 0
    records = list(blocks[at].records)
    spot = max(i for i, r in enumerate(records) if r.payload) if last else 0
    records[spot] = replace(records[spot], payload={**records[spot].payload, "name": value})
    blocks[at] = replace(blocks[at], records=tuple(records))
    return replace(plan, blocks=tuple(blocks))


@pytest.mark.parametrize("value", [*NOT_FINITE, [1, float("nan")], {"a": {"b": float("inf")}}],
                         ids=["inf", "-inf", "nan", "in a list", "in a nested object"])
def test_a_number_json_cannot_carry_anywhere_in_a_payload_is_refused_by_name(value: Any) -> None:
    plan = _with_value(value)
    with pytest.raises(PlanError, match="a number JSON cannot carry; nothing was applied") as raised:
        check_payloads(plan)
    assert "`name`" in raised.value.message and raised.value.where


@pytest.mark.parametrize("value", NOT_FINITE, ids=["inf", "-inf", "nan"])
def test_a_plan_made_now_is_checked_before_the_first_write(value: float) -> None:
    with pytest.raises(PlanError, match="JSON cannot carry"):
        check_new_plan(_with_value(value), expected_digest=None, partial=True, guard=None)


def test_finite_numbers_pass() -> None:
    check_payloads(_with_value(1e308))
    check_payloads(_with_value([0.5, {"x": -2}]))
