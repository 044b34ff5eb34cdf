"""Being paced (429) spends a budget of its own, never the retry attempts that 503s and lost answers need."""

from __future__ import annotations

import asyncio

import pytest
from helpers.api import schools_seed
from helpers.apply import client_for

from loader.api.errors import RateLimited, ServerError
from loader.api.retry import retry_hook
from loader.api.throttle import Pacer, ThrottleBudget, Throttled
from loader.config import RetrySettings
from loader.sandbox.faults import FaultOptions
from loader.sandbox.server import SandboxOptions, serve_in_thread

TWO_ATTEMPTS = RetrySettings(attempts=2, wait_initial=0.01, wait_max=0.05, wait_jitter=0.0, timeout=30.0)


def test_requests_meeting_more_429s_than_they_have_attempts_still_succeed() -> None:
    # One request a second: four concurrent reads meet 429s (Retry-After: 1) more often than their two attempts.
    faults = FaultOptions(rate_limit=1, seed=3)
    with serve_in_thread(SandboxOptions(seed=schools_seed(5), faults=faults)) as sandbox:

        async def read() -> list[int]:
            async with client_for(sandbox, concurrency=4, retry=TWO_ATTEMPTS) as client:
                pages = await asyncio.gather(*(client.first_page("school") for _ in range(4)))
                return [len(page.records) for page in pages]

        assert asyncio.run(read()) == [5, 5, 5, 5]
        assert sandbox.stats()["faults"].get("rate_limited", 0) >= 2


def test_429s_past_the_throttle_budget_fail_as_throttled_and_are_not_retried_again() -> None:
    sent: list[int] = []

    async def send() -> str:
        sent.append(1)
        raise RateLimited(429, "slow down", retry_after=0.0, method="GET", path="/schools")

    pacer = Pacer(ThrottleBudget(max_waits=3))
    with pytest.raises(Throttled) as raised:
        asyncio.run(pacer.paced(send))
    assert len(sent) == 4  # the first answer and three waited out
    assert "still limited after 4 answers of HTTP 429" in raised.value.message
    assert raised.value.where == "GET /schools"
    assert retry_hook("GET")(raised.value) is False


def test_the_throttle_budget_bounds_the_time_waited() -> None:
    async def send() -> str:
        raise RateLimited(429, "slow down", retry_after=30.0)

    pacer = Pacer(ThrottleBudget(max_waits=100, max_wait_s=20.0))
    with pytest.raises(Throttled):  # the first Retry-After would exceed the 20 s: not waited at all
        asyncio.run(asyncio.wait_for(pacer.paced(send), timeout=5))


def test_a_retry_after_holds_back_every_request_of_the_client() -> None:
    answers = iter([RateLimited(429, "slow", retry_after=0.3), None, None])
    started: list[float] = []
    loop_time: list[float] = []

    async def send() -> str:
        started.append(asyncio.get_running_loop().time())
        answer = next(answers)
        if answer is not None:
            raise answer
        return "ok"

    async def two() -> None:
        pacer = Pacer()
        loop_time.append(asyncio.get_running_loop().time())
        first = asyncio.create_task(pacer.paced(send))
        await asyncio.sleep(0.05)  # the 429 has been met: the other request waits out the same pause
        assert list(await asyncio.gather(first, pacer.paced(send))) == ["ok", "ok"]

    asyncio.run(two())
    assert all(when - loop_time[0] >= 0.29 for when in started[1:]), started


def test_other_failures_pass_through_the_pacer_untouched() -> None:
    async def send() -> str:
        raise ServerError(503, "later")

    with pytest.raises(ServerError):
        asyncio.run(Pacer().paced(send))
