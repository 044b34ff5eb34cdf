"""`loader.event_loop.run` gives the coroutine's result without formatting it (asyncio.run in
Python 3.11 formats repr(main task), result included, as the loop closes)."""

from __future__ import annotations

import asyncio
import sys

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
