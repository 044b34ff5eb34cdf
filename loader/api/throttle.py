"""Being paced by the service (429), on a budget of its own.

A 429 says nothing failed: the service asks us to slow down. Spending the retry attempts on it
would leave a request that also meets a 503 or a lost answer without the attempts those need, so
429s are waited out here, before the retry policy (loader.api.retry) sees anything, as the AWS
SDKs' adaptive mode keeps throttling apart from its retry quota. Each request may wait out up to
`max_waits` 429s and `max_wait_s` seconds of them; past that, `Throttled` (a RateLimited) reaches
the retry policy, which does not retry it.

A `Retry-After` holds the whole client back, not only the request that met it: every request
waits until the service said it may come back before it is sent, so a burst of concurrent
requests does not meet the limit one after another.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from loader.api.errors import RateLimited

T = TypeVar("T")

log = logging.getLogger("loader.http")

MAX_PAUSE_S = 60.0  # a Retry-After beyond this is taken as this (the run stays bounded)


@dataclass(frozen=True)
class ThrottleBudget:
    """How much pacing one request takes before it fails: 429s met, and seconds waited on them."""

    max_waits: int = 30
    max_wait_s: float = 180.0
    wait_initial: float = 0.2  # without a Retry-After: exponential from this, with jitter
    wait_max: float = 10.0


class Throttled(RateLimited):
    """429s went on past the throttle budget; not retried again."""


class Pacer:
    """The client's pause after a 429, and the loop that waits 429s out for each request."""

    def __init__(self, budget: ThrottleBudget | None = None, *, clock: Callable[[], float] = time.monotonic):
        self.budget = budget or ThrottleBudget()
        self._clock = clock
        self._resume_at = 0.0
        self.waits = 0  # 429s waited out, over the client's life

    async def hold(self) -> None:
        """Wait until the service said requests may come again (at once when it said nothing)."""
        delay = self._resume_at - self._clock()
        if delay > 0:
            await asyncio.sleep(delay)

    def holding(self) -> bool:
        """Whether requests must wait before they are sent (`hold`)."""
        return self._resume_at > self._clock()

    async def paced(self, send: Callable[[], Awaitable[T]]) -> T:
        """`send()`, sent again after each 429 while the budget lasts."""
        if self.holding():
            await self.hold()
        try:
            return await send()
        except RateLimited as error:
            return await self.paced_after(error, send)

    async def paced_after(self, error: RateLimited, send: Callable[[], Awaitable[T]]) -> T:
        """`paced(send)` once the first `send()` met the 429 `error` (the client sends its first
        attempt itself, with no coroutine of the pacer's between it and the request)."""
        met = 0
        waited = 0.0
        while True:
            met += 1
            delay = self._delay(error.retry_after, met)
            budget = self.budget
            if met > budget.max_waits or waited + delay > budget.max_wait_s:
                raise _spent(error, met, waited) from None
            waited += delay
            self.waits += 1
            log.info("  sent again in %.1f s: the service is limiting the rate (HTTP 429)", delay)
            self._resume_at = max(self._resume_at, self._clock() + delay)
            if self.holding():
                await self.hold()
            try:
                return await send()
            except RateLimited as again:
                error = again

    def _delay(self, retry_after: float | None, met: int) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), MAX_PAUSE_S)
        budget = self.budget
        computed = min(budget.wait_initial * 2 ** (met - 1), budget.wait_max)
        jitter = 0.5 + float(random.random()) / 2  # spreads the clients meeting the limit together
        return float(computed * jitter)


def _spent(error: RateLimited, met: int, waited: float) -> Throttled:
    return Throttled(
        error.status,
        f"{error.service_message} (still limited after {met} answers of HTTP 429 and {waited:.0f} s waited)",
        retry_after=error.retry_after,
        method=error.method,
        path=error.path,
        hint=error.hint,
    )
