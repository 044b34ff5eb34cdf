"""Running a command's coroutine to its end.

`asyncio.run` in Python 3.11 ends by asking `signal.getsignal` for its SIGINT handler, a partial
holding the main task; turning that handler into an enum fails, and the discarded error's message
holds repr(task), result included. For a plan of 100,000 records that repr took about 5 s, twice.
`run` hands the result back through a box, so the task's result is None.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, without the cost of formatting main's result when the loop closes."""
    box: list[T] = []

    async def boxed() -> None:
        box.append(await main)

    asyncio.run(boxed())
    return box[0]
