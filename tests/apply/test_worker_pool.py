"""The executor's worker pool (loader.apply.pool) against a real sandbox: workers that find nothing
ready sleep and are woken as writes end, and a worker's error ends the apply as itself."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers.apply import PROFILE, client_for, school_course_plan

from loader.apply.executor import ApplyOptions, apply_plan
from loader.apply.results import Outcome, RecordResult, Results
from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_thread


def test_workers_with_nothing_ready_wait_for_the_parents_then_write_every_child() -> None:
    # Two schools, each with twelve courses: sixteen workers, fourteen of which find nothing
    # ready until a school exists; every course is written once its school is.
    with serve_in_thread(SandboxOptions(faults=FaultOptions(latency_ms=20))) as sandbox:
        order: list[str] = []

        async def go() -> Results:
            async with client_for(sandbox, concurrency=16) as client:
                return await apply_plan(school_course_plan(2, 12), client, PROFILE, ApplyOptions(concurrency=16),
                                        listener=lambda result: order.append(result.ref))

        results = asyncio.run(go())
    assert results.ok and results.counts()[Outcome.CREATED] == 26
    for school in ("S0", "S1"):
        courses = [at for at, ref in enumerate(order) if ref.startswith(f"courses/C{school[1:]}-")]
        assert len(courses) == 12 and min(courses) > order.index(f"schools/{school}")


def test_an_error_raised_by_a_listener_ends_the_apply_as_itself_with_no_write_left_running() -> None:
    class Refused(Exception):
        pass

    with serve_in_thread(SandboxOptions(faults=FaultOptions(latency_ms=20))) as sandbox:
        seen: list[RecordResult] = []

        def listener(result: RecordResult) -> None:
            seen.append(result)
            if len(seen) == 5:
                raise Refused("the listener gave up")

        async def go() -> int:
            async with client_for(sandbox, concurrency=4) as client:
                with pytest.raises(Refused):
                    await apply_plan(school_course_plan(40, 0), client, PROFILE, ApplyOptions(concurrency=4),
                                     listener=listener)
                running = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
                await asyncio.sleep(0.2)  # a write left running would still be sending
                return len(running)

        assert asyncio.run(go()) == 0

        async def count() -> Any:
            async with client_for(sandbox) as client:
                return len(await client.fetch_collection("school"))

        created = asyncio.run(count())
    assert 5 <= created <= 8  # the fifth result's, and those in flight beside it, at most
