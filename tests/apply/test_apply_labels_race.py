"""A label a person adds in the platform while an apply runs is kept: an update sends the plan's
label changes merged over the labels the record holds when it is written, not the map as the
plan fetched it (`apply MAPPING...` plans and writes at once, with no stale check between).

Against a sandbox as a real server: the plan is made, the person adds a label, then the plan is
written by the executor as `loader apply` writes it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers.apply import PROFILE, client_for
from helpers.three_way import SCHOOLS, world

from loader.apply.executor import ApplyOptions, apply_plan
from loader.apply.results import Outcome
from loader.plan.model import Plan


def _write(sandbox: object, plan: Plan) -> list[Outcome]:
    async def go() -> list[Outcome]:
        async with client_for(sandbox) as client:
            results = await apply_plan(plan, client, PROFILE, ApplyOptions())
            return [r.outcome for r in results.records]

    return asyncio.run(go())


def test_a_label_added_in_the_platform_during_an_apply_is_not_wiped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with world(tmp_path) as w:
        ids = w.load([{"code": "K0", "name": "School 0", "custom_attributes": {"Faculty": "Arts"}},
                      {"code": "K1", "name": "School 1", "custom_attributes": {"Faculty": "Arts", "Old": "x"}}])
        w.sheet([("K0", "School 0", "Science"), ("K1", "School 1", "Law")], faculty=True)
        plan = w.plan()
        # Meanwhile a person labels both schools.
        w.edit(ids["K0"], {"custom_attributes": {"Faculty": "Arts", "Campus": "North"}})
        w.edit(ids["K1"], {"custom_attributes": {"Faculty": "Arts", "Old": "x", "Campus": "South"}})

        assert _write(w.sandbox, plan) == [Outcome.UPDATED, Outcome.UPDATED]
        live = {s["code"]: s["custom_attributes"] for s in w.loader.all_pages(SCHOOLS)}
        assert live["K0"] == {"Faculty": "Science", "Campus": "North"}
        assert live["K1"] == {"Faculty": "Law", "Old": "x", "Campus": "South"}
