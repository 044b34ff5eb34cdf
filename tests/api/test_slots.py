"""The client's concurrency slots: never more holders than slots, waiters served in turn, no slot lost."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.api.slots import Slots


async def _hold(slots: Slots, turns: int, holding: list[int], peak: list[int], order: list[int], me: int) -> None:
    if not slots.take_now():
        await slots.take()
    try:
        order.append(me)
        holding[0] += 1
        peak[0] = max(peak[0], holding[0])
        for _ in range(turns):
            await asyncio.sleep(0)
    finally:
        holding[0] -= 1
        slots.give()


@settings(max_examples=60, deadline=None)
@given(size=st.integers(1, 5), turns=st.lists(st.integers(0, 4), min_size=1, max_size=30))
def test_never_more_holders_than_slots_and_every_slot_comes_back(size: int, turns: list[int]) -> None:
    holding, peak = [0], [0]
    order: list[int] = []
    slots = Slots(size)

    async def run() -> None:
        await asyncio.gather(*(_hold(slots, n, holding, peak, order, i) for i, n in enumerate(turns)))

    asyncio.run(run())
    assert peak[0] <= size
    if min(turns) > 0:  # each holds its slot across a turn of the loop: every slot is used
        assert peak[0] == min(size, len(turns))
    assert sorted(order) == list(range(len(turns)))
    assert slots.free == size


def test_waiters_are_served_in_the_order_they_came() -> None:
    async def run() -> list[int]:
        slots = Slots(1)
        assert slots.take_now()
        served: list[int] = []

        async def wait(me: int) -> None:
            await slots.take()
            served.append(me)
            slots.give()

        waiters = [asyncio.create_task(wait(i)) for i in range(5)]
        await asyncio.sleep(0)
        assert not slots.take_now()  # others wait before it: no jumping the queue
        slots.give()
        await asyncio.gather(*waiters)
        return served

    assert asyncio.run(run()) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("given_first", [False, True])
def test_a_waiter_cancelled_takes_no_slot_away(given_first: bool) -> None:
    async def run() -> int:
        slots = Slots(1)
        assert slots.take_now()
        cancelled = asyncio.create_task(slots.take())
        after = asyncio.create_task(slots.take())
        await asyncio.sleep(0)
        if given_first:  # the slot is handed to it, and it is cancelled before it runs again
            slots.give()
        cancelled.cancel()
        if not given_first:
            await asyncio.sleep(0)
            slots.give()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        await asyncio.wait_for(after, timeout=5)  # the slot reached the next waiter
        slots.give()
        return slots.free

    assert asyncio.run(run()) == 1


def test_there_is_at_least_one_slot() -> None:
    with pytest.raises(ValueError):
        Slots(0)
