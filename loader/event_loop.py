"""Running a command's coroutine to its end.

`asyncio.run` in Python 3.11 ends by asking `signal.getsignal` for its SIGINT handler, a partial
holding the main task; turning that handler into an enum fails, and the discarded error's message
holds repr(task), result included. For a plan of 100,000 records that repr took about 5 s, twice.
`run` hands the result back through a box, so the task's result is None.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, without the cost of formatting main's result when the loop closes."""
    box: list[T] = []

    async def boxed() -> None:
        box.append(await main)

    asyncio.run(boxed())
    return box[0]


# A worker thread that holds the GIL keeps it until another thread has waited this long for it.
LOOP_SWITCH_INTERVAL_S = 0.0005


@contextmanager
def loop_switches_quickly(interval: float = LOOP_SWITCH_INTERVAL_S) -> Iterator[None]:
    """The GIL handed to a waiting thread after `interval` rather than Python's 5 ms, inside; as it
    was, after (process-wide).

    While a plan's diff runs in a worker thread, the event loop, woken by a page, waited for the GIL
    until the worker's interval ran out: at 5 ms, pages at 100,000 records took 26.4 ms on average
    (20 ms latency) while the diff ran beside them, at 0.5 ms 24.8 ms.
    """
    before = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        yield
    finally:
        sys.setswitchinterval(before)
