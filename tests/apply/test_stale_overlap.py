"""A saved plan's stale check runs beside the writes: what it checks (and what refers to it) waits
for its answer, everything else goes ahead; against a real sandbox, edits made by another client."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.apply import PROFILE, client_for, make_plan, record

from loader.apply.executor import ApplyOptions, apply_plan
from loader.apply.results import Outcome, Results
from loader.apply.stale import StaleCheck, start_stale_check
from loader.plan.model import Action, Plan
from loader.sandbox.server import SandboxOptions, serve_in_thread

SEED = {"institution-a": {"schools": [
    {"id": f"00000000-0000-4000-8000-00000000000{i}", "code": f"S{i}", "name": f"School {i}"} for i in range(3)
]}}


@pytest.fixture
def sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions(seed=SEED)) as running:
        yield running


def _plan(sandbox: Any) -> Plan:
    """Updates of S0..S2 as they are live now; a course referring to S1 by its live id; a new course."""
    schools = asyncio.run(_fetch(sandbox, "school"))
    updates = [record("schools", "school", s["code"], {"name": f"Renamed {s['code']}"}, action=Action.UPDATE,
                      live_id=s["id"], live_updated_time=s["metadata"]["updated"]["time"])
               for s in sorted(schools, key=lambda s: s["code"])]
    s1 = next(s["id"] for s in schools if s["code"] == "S1")
    under_s1 = record("courses", "course", "C1", {"code": "C1", "name": "Under S1", "parent": {"id": s1}},
                      refers_to=("schools/S1",))
    alone = record("courses", "course", "D", {"code": "D", "name": "Alone"})
    return make_plan(("schools", "school", updates), ("courses", "course", [under_s1, alone]))


async def _fetch(sandbox: Any, entity: str) -> list[dict[str, Any]]:
    async with client_for(sandbox) as client:
        return await client.fetch_collection(entity)


async def _rename(sandbox: Any, code: str, name: str) -> None:
    async with client_for(sandbox) as client:
        found = await client.get("school", code)
        assert found is not None
        await client.update("school", found["id"], {"name": name})


def test_an_edit_by_another_client_is_caught_by_the_check_running_beside_the_writes(sandbox: Any) -> None:
    plan = _plan(sandbox)
    asyncio.run(_rename(sandbox, "S1", "Changed by someone else"))

    async def go() -> Results:
        async with client_for(sandbox, concurrency=4) as client:
            check = start_stale_check(plan, client)
            assert check is not None and check.checked == {"schools/S0", "schools/S1", "schools/S2"}
            return await apply_plan(plan, client, PROFILE, ApplyOptions(concurrency=4, stale=check))

    results = asyncio.run(go()).by_ref()
    assert results["schools/S1"].outcome is Outcome.SKIPPED
    assert (results["schools/S1"].message or "").startswith("stale: changed in the service since the plan was made")
    assert results["courses/C1"].outcome is Outcome.SKIPPED
    assert "refers to schools/S1" in (results["courses/C1"].message or "")
    assert results["schools/S0"].outcome is Outcome.UPDATED and results["schools/S2"].outcome is Outcome.UPDATED
    assert results["courses/D"].outcome is Outcome.CREATED
    names = {s["code"]: s["name"] for s in asyncio.run(_fetch(sandbox, "school"))}
    assert names == {"S0": "Renamed S0", "S1": "Changed by someone else", "S2": "Renamed S2"}
    assert [c["code"] for c in asyncio.run(_fetch(sandbox, "course"))] == ["D"]


def test_the_records_checked_and_those_referring_to_them_wait_for_the_answer_the_rest_do_not(
    sandbox: Any,
) -> None:
    plan = _plan(sandbox)
    seen_before_the_answer: dict[str, list[dict[str, Any]]] = {}

    async def answer_once_d_exists(client: Any) -> dict[str, str]:
        """The check's answer, given only once the unrelated create has landed (so it went first)."""
        for _ in range(500):
            courses = await client.fetch_collection("course")
            if courses:
                break
            await asyncio.sleep(0.01)
        seen_before_the_answer["course"] = courses
        seen_before_the_answer["school"] = await client.fetch_collection("school")
        return {"schools/S1": "stale: changed in the service (told by this test)"}

    async def go() -> Results:
        async with client_for(sandbox, concurrency=4) as client:
            check = StaleCheck(frozenset({"schools/S0", "schools/S1", "schools/S2"}),
                               asyncio.create_task(answer_once_d_exists(client)))
            return await apply_plan(plan, client, PROFILE, ApplyOptions(concurrency=4, stale=check))

    results = asyncio.run(go()).by_ref()
    assert [c["code"] for c in seen_before_the_answer["course"]] == ["D"]  # written before the answer
    assert {s["name"] for s in seen_before_the_answer["school"]} == {"School 0", "School 1", "School 2"}
    assert results["schools/S1"].message == "stale: changed in the service (told by this test)"
    assert results["courses/C1"].outcome is Outcome.SKIPPED
    assert results["schools/S0"].outcome is Outcome.UPDATED and results["schools/S2"].outcome is Outcome.UPDATED


def test_a_check_that_fails_skips_the_records_it_checks_saying_why_and_the_rest_is_written(sandbox: Any) -> None:
    plan = _plan(sandbox)

    async def go() -> Results:
        async with client_for(sandbox, concurrency=4) as client:
            failing = asyncio.create_task(client.fetch_collection("no-such-entity"))  # the profile refuses it
            check = StaleCheck(frozenset({"schools/S0", "schools/S1", "schools/S2"}), failing)  # type: ignore[arg-type]
            return await apply_plan(plan, client, PROFILE, ApplyOptions(concurrency=4, stale=check))

    results = asyncio.run(go())
    by_ref = results.by_ref()
    for code in ("S0", "S1", "S2"):
        assert by_ref[f"schools/{code}"].outcome is Outcome.SKIPPED
        assert "could not check whether it changed in the service" in (by_ref[f"schools/{code}"].message or "")
        assert "no-such-entity" in (by_ref[f"schools/{code}"].message or "")
    assert by_ref["courses/C1"].outcome is Outcome.SKIPPED
    assert by_ref["courses/D"].outcome is Outcome.CREATED and not results.ok
    assert {s["name"] for s in asyncio.run(_fetch(sandbox, "school"))} == {"School 0", "School 1", "School 2"}


def test_an_interruption_while_the_check_runs_skips_the_parked_records_as_interrupted(sandbox: Any) -> None:
    plan = _plan(sandbox)

    async def go() -> Results:
        stop = asyncio.Event()
        async with client_for(sandbox, concurrency=4) as client:
            async def answer_after_the_stop() -> dict[str, str]:
                while not (await client.fetch_collection("course")):
                    await asyncio.sleep(0.01)
                stop.set()  # Ctrl-C, once the unrelated create is written
                return {}

            check = StaleCheck(frozenset({"schools/S0", "schools/S1", "schools/S2"}),
                               asyncio.create_task(answer_after_the_stop()))
            return await apply_plan(plan, client, PROFILE, ApplyOptions(concurrency=4, stale=check), stop=stop)

    results = asyncio.run(go())
    by_ref = results.by_ref()
    assert results.interrupted and by_ref["courses/D"].outcome is Outcome.CREATED
    for ref in ("schools/S0", "schools/S1", "schools/S2", "courses/C1"):
        assert by_ref[ref].outcome is Outcome.SKIPPED
        assert by_ref[ref].message == "not applied: interrupted before it was sent"
    assert {s["name"] for s in asyncio.run(_fetch(sandbox, "school"))} == {"School 0", "School 1", "School 2"}
