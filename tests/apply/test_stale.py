"""Stale detection (pure part): which planned changes the service has moved on from."""

from __future__ import annotations

from helpers.apply import record

from loader.apply.stale import stale_records
from loader.plan.model import Action


def _update(code: str, live_id: str, seen: int | None):
    return record("schools", "school", code, {"name": "New"}, action=Action.UPDATE, live_id=live_id,
                  live_updated_time=seen)


def _live(live_id: str, time: int | None) -> dict:
    return {"id": live_id, "metadata": {"updated": {"time": time}}}


def test_an_unchanged_record_is_not_stale_and_a_changed_one_says_when():
    stale = stale_records(
        [_update("A", "a", 1_700_000_000_000), _update("B", "b", 1_700_000_000_000)],
        {"school": [_live("a", 1_700_000_000_000), _live("b", 1_700_000_100_000)]},
    )
    assert list(stale) == ["schools/B"]
    assert "changed in the service since the plan" in stale["schools/B"] and "2023-11-14" in stale["schools/B"]


def test_a_record_gone_from_the_service_is_stale():
    stale = stale_records([_update("A", "a", 1)], {"school": []})
    assert "no longer in the service" in stale["schools/A"]


def test_a_record_the_plan_saw_no_update_time_for_cannot_be_verified_and_is_skipped():
    stale = stale_records([_update("A", "a", None)], {"school": [_live("a", None)]})
    assert "cannot tell whether it changed" in stale["schools/A"]
