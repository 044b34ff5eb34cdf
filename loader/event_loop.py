"""Running a command's coroutine to its end, and stopping work in hand on the first Ctrl-C.

`run(main)` is `asyncio.run(main)` with the result handed back through a box. In Python 3.11,
`asyncio.run` ends by asking `signal.getsignal` for its SIGINT handler, a partial holding the
main task; turning that handler into an enum fails, and the discarded error's message holds
repr(task), result included: a plan's whole repr, formatted twice. Boxed, the task's result is
None. The loop is asyncio's own; nothing here changes an interpreter setting.

`stop_on_signals(stop, notice)` turns the first Ctrl-C (or SIGTERM) into a request to stop that the
work in hand can honour (apply lets the requests in flight end and writes its results).
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, without formatting main's result when the loop closes."""
    box: list[T] = []

    async def boxed() -> None:
        box.append(await main)

    asyncio.run(boxed())
    return box[0]


# Ctrl-C, and SIGTERM as CI sends when a job is cancelled.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def stop_on_signals(stop: asyncio.Event, notice: str) -> Iterator[None]:
    """Inside, on the running loop: the first SIGINT or SIGTERM prints `notice` on stderr and sets
    `stop` rather than interrupting; the handlers are then removed, so a second signal aborts as
    usual. Where signals cannot be handled (not the main thread), nothing is installed."""
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []

    def remove() -> None:
        while installed:
            loop.remove_signal_handler(installed.pop())

    def on_signal() -> None:
        print(notice, file=sys.stderr)
        stop.set()
        remove()

    try:
        for number in STOP_SIGNALS:
            loop.add_signal_handler(number, on_signal)
            installed.append(number)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
        remove()
    try:
        yield
    finally:
        remove()
