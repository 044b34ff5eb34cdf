"""Retirement (`on_dropped: {set: ...}`) in the pure planner: records a block loaded (its history
lines) that its source no longer names, against live dicts -> the plan's retire changes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers.plan import Block

from loader.history.journal import FieldWrite
from loader.history.lines import Owner
from loader.history.store import History
from loader.places import CellRef, MappingPlace
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.model import Plan, RecordPlan
from loader.profile import load_profile
from loader.source.mapping import OnDropped
from loader.source.records import DesiredRecord

PROFILE = load_profile()
OWNER = Owner("intake.xlsx", "arrangements")
PLACE = MappingPlace("arrangements.yaml", 8, 5)


@dataclass(frozen=True)
class RetiringBlock(Block):
    on_dropped: OnDropped | None = None


def _live(rid: str, code: str, status: str, **more: Any) -> dict[str, Any]:
    return {"id": rid, "code": code, "name": code, "status": status, **more,
            "metadata": {"updated": {"time": 1_700_000_000_000}}}


def _history(tmp_path: Path, loaded: Sequence[tuple[str, str, str]]) -> History:
    """A history of the block's loads: (code, live id, status written)."""
    history = History.open(tmp_path)
    writer = history.begin_apply("sandbox", plan_digest=None, by=None)
    for code, rid, status in loaded:
        writer.record("update", "arrangement", (code,), rid, [FieldWrite("status", OWNER, after=status),
                                                              FieldWrite("code", OWNER, after=code)])
    history.finish_apply(writer)
    return history


def _block(codes: Sequence[str], **values: Any) -> RetiringBlock:
    records = tuple(DesiredRecord("arrangements", "arrangement", (code,), {"code": code},
                                  CellRef("intake.xlsx", "arrangements", None, n + 2)) for n, code in enumerate(codes))
    return RetiringBlock("arrangements", "arrangement", ("code",), records, sheet="arrangements",
                         on_dropped=OnDropped(tuple(values.items()), PLACE))


def _plan(block: RetiringBlock, live: list[dict[str, Any]], history: History) -> Plan:
    return plan_changes([block], {"arrangement": live}, PROFILE, header=PlanHeader("sandbox", "5.1.0", "http://x"),
                        history=history)


def _retired(plan: Plan) -> list[RecordPlan]:
    return [r for r in plan.records() if r.retiring]


def _said(plan: Plan) -> list[str]:
    return [f.message for b in plan.blocks for f in b.findings if f.code == "retire"]


KEPT = [(f"K{n}", f"k-{n}", "DRAFT") for n in range(8)]
KEPT_LIVE = [_live(rid, code, "DRAFT") for code, rid, _ in KEPT]
KEPT_CODES = [code for code, _, _ in KEPT]


def test_a_dropped_active_record_moves_to_inactive_and_draft_or_ready_ones_are_left_unpublished(
    tmp_path: Path,
) -> None:
    history = _history(tmp_path, [("A1", "a-1", "ACTIVE"), ("A2", "a-2", "DRAFT"), ("A3", "a-3", "READY"), *KEPT])
    live = [_live("a-1", "A1", "ACTIVE"), _live("a-2", "A2", "DRAFT"), _live("a-3", "A3", "READY"), *KEPT_LIVE]
    plan = _plan(_block(KEPT_CODES, status="INACTIVE"), live, history)
    (retire,) = _retired(plan)
    assert (retire.key, retire.live_id, retire.status_path, retire.payload) == (("A1",), "a-1", ("INACTIVE",), {})
    said = _said(plan)
    assert any("A2" in m and "left unpublished" in m for m in said)
    assert any("A3" in m and "left unpublished" in m for m in said)


def test_a_retirement_staff_undid_is_kept_not_retired_again(tmp_path: Path) -> None:
    history = _history(tmp_path, [("A1", "a-1", "INACTIVE"), *KEPT])  # the loader retired it last cycle
    plan = _plan(_block(KEPT_CODES, status="INACTIVE"), [_live("a-1", "A1", "ACTIVE"), *KEPT_LIVE], history)
    assert _retired(plan) == [] and any("A1" in m and "kept" in m for m in _said(plan))


def test_labels_are_set_over_the_live_ones(tmp_path: Path) -> None:
    history = _history(tmp_path, [("A1", "a-1", "DRAFT"), *KEPT])
    live = [_live("a-1", "A1", "DRAFT", custom_attributes={"Owner": "Ann"}), *KEPT_LIVE]
    plan = _plan(_block(KEPT_CODES, **{"custom_attributes.Status": "Discontinued"}), live, history)
    (retire,) = _retired(plan)
    assert retire.payload == {"custom_attributes": {"Owner": "Ann", "Status": "Discontinued"}}


def test_a_source_that_read_nothing_or_lost_too_much_retires_nothing_and_says_why(tmp_path: Path) -> None:
    history = _history(tmp_path, KEPT)
    nothing = _plan(_block([], status="INACTIVE"), KEPT_LIVE, history)
    assert _retired(nothing) == [] and any("read no records" in m for m in _said(nothing))
    most = _plan(_block(KEPT_CODES[:1], status="INACTIVE"), KEPT_LIVE, history)
    assert _retired(most) == [] and any("7 of the 8 records" in m for m in _said(most))
