"""When a read's answer leaves the sandbox: `latency` after the request reached the app, with all of the
app's own work (routing, the handler, the response's headers and body) done inside that time.

`AnswerOnTime` is the outermost of the app's middleware. It notes when a request arrived; a handler
that wants its answer held (`hold_answer`) gets it sent that long after the arrival. Waiting inside
the handler instead would leave the routing before it and Starlette's work after it outside the
wait: time on top of the latency that is no part of the client being measured.

A write does not use this: it waits before doing anything (see `loader.sandbox.app`), so a client
that gives up during the wait has changed nothing.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_TIMING = "sandbox.answer_timing"
_READS = frozenset({"GET", "HEAD"})  # Starlette answers HEAD on every GET route


@dataclass(slots=True)
class _Timing:
    arrived: float
    answer_at: float | None = None


class AnswerOnTime:
    """ASGI middleware: sends a held answer at the time its handler asked for (`hold_answer`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _READS:  # only reads are held: writes pass untouched
            await self.app(scope, receive, send)
            return
        timing = scope[_TIMING] = _Timing(time.monotonic())
        held: list[Message] = []

        async def send_or_hold(message: Message) -> None:
            if timing.answer_at is None:
                await send(message)
            else:
                held.append(message)

        await self.app(scope, receive, send_or_hold)
        if held:
            assert timing.answer_at is not None
            wait = timing.answer_at - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            for message in held:
                await send(message)


def hold_answer(scope: Scope, delay_s: float) -> None:
    """Have this request's answer sent `delay_s` after it arrived (the app must run inside `AnswerOnTime`)."""
    timing = scope.get(_TIMING)
    if not isinstance(timing, _Timing):
        raise RuntimeError("hold_answer needs AnswerOnTime around the app")
    timing.answer_at = timing.arrived + delay_s
