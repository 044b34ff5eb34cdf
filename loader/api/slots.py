"""The client's concurrency slots: at most `size` requests in flight, the others waiting in turn.

asyncio.Semaphore does this job with three coroutines a request (`__aenter__`, `acquire`,
`__aexit__`) and a scan of its waiters each time, client CPU paid by every write even when a slot
is free, as it always is during an apply (the executor's pool has as many workers as the client
has slots). Here a free slot is taken by a plain call (`take_now`); only a request that must wait
awaits (`take`), and a slot given back goes straight to the longest waiting request.
"""

from __future__ import annotations

import asyncio
from collections import deque


class Slots:
    """`size` slots; take one (`take_now`, else `await take()`), give it back with `give`."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("there must be at least one slot")
        self._free = size
        self._waiting: deque[asyncio.Future[None]] = deque()

    @property
    def free(self) -> int:
        return self._free

    def take_now(self) -> bool:
        """Take a slot if one is free and no request waits for one before this; whether it did."""
        if self._free and not self._waiting:
            self._free -= 1
            return True
        return False

    async def take(self) -> None:
        """Take a slot, waiting in turn for one to be given back."""
        if self.take_now():
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # given a slot, then cancelled: pass it on
                self.give()
            raise

    def give(self) -> None:
        """Give a slot back: to the longest waiting request, if one still waits."""
        waiting = self._waiting
        while waiting:
            waiter = waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1
