"""`loader.event_loop.run` gives the coroutine's result without formatting it (asyncio.run in
Python 3.11 formats repr(main task), result included, as the loop closes); the first Ctrl-C or
SIGTERM inside `stop_on_signals` asks to stop, a second Ctrl-C aborts."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import signal
import sys
import threading
import time

import pytest

from loader import event_loop


class _Counted:
    reprs = 0

    def __repr__(self) -> str:
        _Counted.reprs += 1
        return "_Counted()"


def test_the_result_comes_back_unformatted() -> None:
    async def main() -> _Counted:
        await asyncio.sleep(0)
        return _Counted()

    result = event_loop.run(main())
    assert isinstance(result, _Counted)
    assert _Counted.reprs == 0


def test_an_exception_comes_back_as_raised() -> None:
    async def main() -> None:
        raise ValueError("no")

    try:
        event_loop.run(main())
    except ValueError as exc:
        assert str(exc) == "no"
    else:
        raise AssertionError("no exception")


def test_quick_switching_holds_inside_only_and_is_put_back_after_an_error() -> None:
    before = sys.getswitchinterval()
    with event_loop.loop_switches_quickly(0.001):
        assert sys.getswitchinterval() == pytest.approx(0.001)
    assert sys.getswitchinterval() == before
    with pytest.raises(RuntimeError), event_loop.loop_switches_quickly(0.002):
        raise RuntimeError("a plan that failed")
    assert sys.getswitchinterval() == before


def test_the_loop_run_makes_says_when_it_waits_and_other_loops_have_no_such_flag() -> None:
    async def main() -> tuple[bool, bool]:
        idle = event_loop.idle_of(asyncio.get_running_loop())
        assert idle is not None
        busy = idle.loop_waits  # this coroutine is running: the loop is not waiting
        waits = await asyncio.to_thread(_seen_waiting, idle)  # the loop waits for this thread
        return busy, waits

    assert event_loop.run(main()) == (False, True)

    async def plain() -> event_loop.LoopIdle | None:
        return event_loop.idle_of(asyncio.get_running_loop())

    assert asyncio.run(plain()) is None


def test_a_worker_giving_way_waits_while_the_loop_is_busy_and_runs_freely_while_it_waits() -> None:
    """While the loop is busy (here: a coroutine holding it for 0.2 s), each give_way() waits for it,
    at most GIVE_WAY_MAX_S; while the loop waits for the worker, give_way() returns at once."""
    loop_busy, loop_busy_until = threading.Event(), threading.Event()

    def worker(idle: event_loop.LoopIdle) -> tuple[int, float]:
        loop_busy.wait()
        passed_while_busy = 0
        while not loop_busy_until.is_set():
            idle.give_way()
            passed_while_busy += 1
        started = time.monotonic()
        for _ in range(100_000):
            idle.give_way()
        return passed_while_busy, time.monotonic() - started

    async def main() -> tuple[int, float, float]:
        idle = event_loop.idle_of(asyncio.get_running_loop())
        assert idle is not None
        work = asyncio.ensure_future(asyncio.to_thread(worker, idle))
        await asyncio.sleep(0.01)  # the worker is started, waiting for loop_busy
        loop_busy.set()
        busy_from = time.monotonic()
        time.sleep(0.2)  # the loop is busy: it runs this coroutine, not waiting for I/O
        busy_s = time.monotonic() - busy_from
        loop_busy_until.set()
        passed, waiting_s = await work
        return passed, busy_s, waiting_s

    busy, busy_s, waiting_s = event_loop.run(main())
    # 0.2 s of a busy loop lets through at most one step per GIVE_WAY_MAX_S (about 100); a step that
    # does not wait would pass millions of times.
    assert busy <= busy_s / event_loop.GIVE_WAY_MAX_S * 1.5
    assert waiting_s < 5  # 100,000 steps: about 0.02 s; waiting each step would take 200 s


def _seen_waiting(idle: event_loop.LoopIdle) -> bool:
    """In a worker thread the loop awaits: whether the loop is seen waiting (it gets there soon)."""
    deadline = time.monotonic() + 5
    while not idle.loop_waits and time.monotonic() < deadline:
        time.sleep(0.001)
    return idle.loop_waits


def test_giving_way_in_the_loop_thread_itself_returns_at_once() -> None:
    async def main() -> float:
        idle = event_loop.idle_of(asyncio.get_running_loop())
        assert idle is not None
        await asyncio.sleep(0.01)  # the loop has waited once: its thread is known
        started = time.monotonic()
        for _ in range(10_000):  # each would wait GIVE_WAY_MAX_S (20 s in all) if it waited
            idle.give_way()
        return time.monotonic() - started

    assert event_loop.run(main()) < 2


def test_once_the_loop_has_closed_a_worker_no_longer_gives_way() -> None:
    """A worker still running after its loop closed (a second Ctrl-C leaves it so) goes on at full speed."""

    async def main() -> event_loop.LoopIdle:
        idle = event_loop.idle_of(asyncio.get_running_loop())
        assert idle is not None
        return idle

    idle = event_loop.run(main())

    def steps() -> float:
        started = time.monotonic()
        for _ in range(2_000):  # 4 s if each waited GIVE_WAY_MAX_S
            idle.give_way()
        return time.monotonic() - started

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        assert pool.submit(steps).result() < 1


@pytest.mark.parametrize("first", [signal.SIGINT, signal.SIGTERM])
def test_the_first_signal_asks_to_stop_and_a_second_ctrl_c_aborts(
    first: signal.Signals, capsys: pytest.CaptureFixture[str]
) -> None:
    stop = asyncio.Event()
    stopped: list[bool] = []

    async def main() -> None:
        with event_loop.stop_on_signals(stop, "finishing what is in flight"):
            os.kill(os.getpid(), first)
            await asyncio.wait_for(stop.wait(), 10)
            stopped.append(True)
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(10)

    with pytest.raises(KeyboardInterrupt):
        event_loop.run(main())
    assert stopped == [True]
    assert capsys.readouterr().err == "finishing what is in flight\n"


def test_signal_handlers_are_removed_on_leaving(capsys: pytest.CaptureFixture[str]) -> None:
    async def main() -> None:
        with event_loop.stop_on_signals(asyncio.Event(), "unused"):
            assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN)
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL

    event_loop.run(main())
    assert capsys.readouterr().err == ""


def test_outside_the_main_thread_no_handler_is_installed_and_the_work_runs() -> None:
    async def main() -> str:
        with event_loop.stop_on_signals(asyncio.Event(), "unused"):
            await asyncio.sleep(0)
            return "done"

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        assert pool.submit(event_loop.run, main()).result(timeout=10) == "done"
