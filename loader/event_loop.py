"""Running a command's coroutine to its end, on an event loop that worker threads give way to.

`asyncio.run` in Python 3.11 ends by asking `signal.getsignal` for its SIGINT handler, a partial
holding the main task; turning that handler into an enum fails, and the discarded error's message
holds repr(task), result included. For a plan of 100,000 records that repr took about 5 s, twice.
`run` hands the result back through a box, so the task's result is None.

The loop `run` makes knows when it waits for I/O (`LoopIdle`). A worker thread doing long CPU work
beside it (a plan's diff) calls `give_way()` between small steps: at once while the loop waits, and
otherwise only once the loop has done what was ready. With one GIL, a page that came in is then
handled, and the next page asked for, without the worker taking turns on every step of it.

`stop_on_signals(stop, notice)` turns the first Ctrl-C (or SIGTERM) into a request to stop that the
work in hand can honour (apply lets the requests in flight end and writes its results).
"""

from __future__ import annotations

import asyncio
import selectors
import signal
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
GiveWay = Callable[[], None]

# A worker that gives way waits at most this long a step for the loop to wait again: a loop busy
# for longer (it never is, in a plan) slows the worker down but never stops it.
GIVE_WAY_MAX_S = 0.002


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on a loop that knows when it is idle (`idle_of`), without the cost of
    formatting main's result when the loop closes."""
    box: list[T] = []

    async def boxed() -> None:
        box.append(await main)

    factory = None if sys.platform == "win32" else _IdleKnowingLoop  # Windows keeps its proactor loop
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(boxed())
    return box[0]


class LoopIdle:
    """Whether an event loop is waiting for I/O, for the worker threads that give way to it."""

    def __init__(self) -> None:
        self._waiting = threading.Event()
        self._loop_thread: int | None = None
        self._closed = False

    def give_way(self) -> None:
        """In a worker thread: return at once while the loop waits; else wait until it waits again
        (at most GIVE_WAY_MAX_S). Costs about a tenth of a microsecond while the loop waits. In the
        loop's own thread it returns at once (the loop cannot wait while it runs this)."""
        if not self._waiting.is_set() and threading.get_ident() != self._loop_thread:
            self._waiting.wait(GIVE_WAY_MAX_S)

    @property
    def loop_waits(self) -> bool:
        """True while the loop waits for I/O (or a timer) with nothing ready to run."""
        return self._waiting.is_set()

    def waiting(self, yes: bool) -> None:
        """Called by the loop's selector, in the loop's thread, around each wait."""
        if self._closed:
            return
        if yes:
            self._loop_thread = threading.get_ident()
            self._waiting.set()
        else:
            self._waiting.clear()

    def close(self) -> None:
        """The loop has closed: nothing is given way to any more. (A worker still running, say after a
        second Ctrl-C, which leaves the loop busy for good, goes on at full speed to its end.)"""
        self._closed = True
        self._waiting.set()


def idle_of(loop: asyncio.AbstractEventLoop) -> LoopIdle | None:
    """The idle flag of a loop `run` made; None for any other loop (its workers do not give way)."""
    return loop.idle if isinstance(loop, _IdleKnowingLoop) else None


def never_give_way() -> None:
    """`give_way` where no loop is to be given way to."""


class _IdleKnowingSelector(selectors.DefaultSelector):
    def __init__(self, idle: LoopIdle) -> None:
        super().__init__()
        self._idle = idle

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is not None and timeout <= 0:  # callbacks are ready: the loop is busy
            return super().select(timeout)
        self._idle.waiting(True)
        try:
            return super().select(timeout)
        finally:
            self._idle.waiting(False)


class _IdleKnowingLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self.idle = LoopIdle()
        super().__init__(_IdleKnowingSelector(self.idle))

    def close(self) -> None:
        self.idle.close()
        super().close()


# A worker thread that holds the GIL keeps it until another thread has waited this long for it.
LOOP_SWITCH_INTERVAL_S = 0.0001


@contextmanager
def loop_switches_quickly(interval: float = LOOP_SWITCH_INTERVAL_S) -> Iterator[None]:
    """The GIL handed to a waiting thread after `interval` rather than Python's 5 ms, inside; as it
    was, after (process-wide).

    While a plan's diff runs in a worker thread, the event loop, woken by a page, waited for the GIL
    until the worker's interval ran out: at 5 ms, pages at 100,000 records took 26.4 ms on average
    (20 ms latency) while the diff ran beside them, at 0.5 ms 24.8 ms. Now that the worker gives way
    to the loop (`LoopIdle`), the interval is only how long a woken loop waits for the worker's
    step in hand, and it no longer makes the two take turns through the loop's work: 0.1 ms.
    """
    before = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


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
