"""`loader.event_loop.run` gives the coroutine's result without formatting it (asyncio.run in
Python 3.11 formats repr(main task), result included, as the loop closes); the first Ctrl-C or
SIGTERM inside `stop_on_signals` asks to stop, a second Ctrl-C aborts."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import signal

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
