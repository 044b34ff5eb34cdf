"""`AnswerOnTime`: a held answer leaves the asked-for time after the request arrived, with the app's
work inside that time; an answer not held leaves at once."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from starlette.types import Message, Receive, Scope, Send

from loader.sandbox.answer_time import AnswerOnTime, hold_answer


def _answer_after(work_s: float, hold_s: float | None) -> tuple[float, list[str]]:
    """Seconds from the call to the answer's last message, and the messages' types, for an app that
    works `work_s` (holding its answer `hold_s` after arrival, when given) and answers."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if hold_s is not None:
            hold_answer(scope, hold_s)
        await asyncio.sleep(work_s)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}", "more_body": False})

    sent: list[tuple[float, Message]] = []

    async def send(message: Message) -> None:
        sent.append((time.monotonic(), message))

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def call() -> float:
        scope: dict[str, Any] = {"type": "http", "method": "GET", "path": "/institution/tags", "headers": []}
        started = time.monotonic()
        await AnswerOnTime(app)(scope, receive, send)
        return sent[-1][0] - started

    return asyncio.run(call()), [message["type"] for _, message in sent]


def test_a_held_answer_leaves_the_time_asked_after_arrival_with_the_work_inside_it() -> None:
    elapsed, kinds = _answer_after(work_s=0.3, hold_s=0.5)
    assert kinds == ["http.response.start", "http.response.body"]
    assert 0.5 <= elapsed < 0.75  # working 0.3 s then waiting 0.5 s would take 0.8 s


def test_an_answer_not_held_leaves_as_soon_as_it_is_made() -> None:
    elapsed, kinds = _answer_after(work_s=0.05, hold_s=None)
    assert kinds == ["http.response.start", "http.response.body"]
    assert elapsed < 0.3


def test_work_longer_than_the_hold_is_answered_when_done() -> None:
    elapsed, _ = _answer_after(work_s=0.3, hold_s=0.1)
    assert 0.3 <= elapsed < 0.55


def test_holding_an_answer_outside_answer_on_time_is_a_bug_said_plainly() -> None:
    with pytest.raises(RuntimeError, match="AnswerOnTime"):
        hold_answer({"type": "http"}, 0.1)
