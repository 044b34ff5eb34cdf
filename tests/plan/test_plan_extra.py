"""A plan's head fields kept under plan.json's `extra`: typed on the Plan, the same object on disk."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helpers.apply import make_plan, record

from loader.errors import PlanError
from loader.plan.digest import plan_digest
from loader.plan.model import Plan
from loader.plan.plan_file import read_plan_json, write_plan_json

PLAN = make_plan(("schools", "school", [record("schools", "school", "N1", {"code": "N1", "name": "New"})]))
DECISION = ("sandbox", "school", '["N1"]', "name", "sha256:ab", "skip", "ann", "2026-01-02", "")


def _written(plan: Plan, tmp_path: Path) -> dict[str, object]:
    write_plan_json(plan, tmp_path / "plan.json")
    text: dict[str, object] = json.loads((tmp_path / "plan.json").read_text("utf-8"))
    return text


def test_every_field_set_is_written_under_its_key_of_extra_and_read_back(tmp_path: Path) -> None:
    plan = replace(PLAN, profile_fingerprint="sha256:01", history_state="lineage/3/20260101T000000Z-ab",
                   decisions=(DECISION,), revert_of="20260101T000000Z-ab")
    assert _written(plan, tmp_path)["extra"] == {
        "profile": "sha256:01", "history": "lineage/3/20260101T000000Z-ab", "decisions": [list(DECISION)],
        "revert_of": "20260101T000000Z-ab"}
    read = read_plan_json(tmp_path / "plan.json")
    assert replace(read, digest=None) == plan and read.digest == plan_digest(plan)


def test_a_plan_with_none_of_them_writes_an_empty_extra_and_reads_with_the_defaults(tmp_path: Path) -> None:
    assert _written(PLAN, tmp_path)["extra"] == {}
    read = read_plan_json(tmp_path / "plan.json")
    assert (read.profile_fingerprint, read.history_state, read.decisions, read.revert_of) == (None, None, (), None)


def test_the_digest_covers_each_field() -> None:
    fields: dict[str, Any] = {"profile_fingerprint": "sha256:01", "history_state": "l/1/-", "decisions": (DECISION,),
                              "revert_of": "a-1"}
    digests = {plan_digest(replace(PLAN, **{name: value})) for name, value in fields.items()}
    assert len(digests) == len(fields) and plan_digest(PLAN) not in digests


def test_the_digest_is_the_one_the_same_extra_object_gave_before_the_fields_were_typed() -> None:
    # pinned from the loader whose Plan held `extra={"profile": …, "history": …, "decisions": […], "revert_of": …}`
    plan = replace(PLAN, profile_fingerprint="sha256:01", history_state="lineage/3/x", decisions=(DECISION,),
                   revert_of="a-1")
    assert plan_digest(plan) == "sha256:e439b9299e4148bb37487925c21f66269481932976fec496b6a52d514c6a935c"


def test_a_hand_edited_extra_of_the_wrong_type_is_refused_with_a_message(tmp_path: Path) -> None:
    data = _written(PLAN, tmp_path)
    (tmp_path / "plan.json").write_text(json.dumps({**data, "extra": {"decisions": 5}}), "utf-8")
    with pytest.raises(PlanError, match="not a valid plan"):
        read_plan_json(tmp_path / "plan.json")
