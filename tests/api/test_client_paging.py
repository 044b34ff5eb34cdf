"""Paging: every record exactly once whatever the last page looks like, and page-token expiry survived."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Mapping
from typing import Any

import pytest
from helpers.api import environment_for, requests_to, schools_seed
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.api.client import ApiClient
from loader.api.errors import MalformedAnswer, ValidationFailed
from loader.api.paging import Page, flattened, is_page_token_refusal, iter_batches
from loader.sandbox.server import FaultOptions

SCHOOLS = "GET /institution/catalogue/schools"
EXPECTED_CODES = [f"S{i:05d}" for i in range(450)]


async def _consume_slowly(client: ApiClient, *, prefetch: int | None, pause_after: int, pause_s: float) -> list[str]:
    codes = []
    async for record in client.iter_collection("school", prefetch=prefetch):
        codes.append(record["code"])
        if len(codes) == pause_after:
            await asyncio.sleep(pause_s)
    return codes


def test_a_slow_consumer_does_not_let_page_tokens_expire(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(450), page_token_ttl=1.0)

    async def go() -> list[str]:
        async with ApiClient(environment_for(sb), profile) as client:
            return await _consume_slowly(client, prefetch=None, pause_after=50, pause_s=1.5)

    assert run(go()) == EXPECTED_CODES
    assert requests_to(sb.stats(), SCHOOLS) == 5  # 100+100+100+100+50: no restart was needed


def test_the_collection_size_is_told_as_the_pages_give_it(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(450))
    totals: list[int] = []

    async def go() -> list[str]:
        async with ApiClient(environment_for(sb), profile) as client:
            return [r["code"] async for r in client.iter_collection("school", on_total=totals.append)]

    assert run(go()) == EXPECTED_CODES
    assert totals == [450] * 5  # each of the five pages gives it


def test_a_collection_comes_a_page_at_a_time_as_the_records_each_page_brings(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(450))

    async def go() -> list[list[str]]:
        async with ApiClient(environment_for(sb), profile) as client:
            return [[r["code"] for r in batch] async for batch in client.iter_collection_batches("school")]

    batches = run(go())
    assert [len(batch) for batch in batches] == [100, 100, 100, 100, 50]
    assert [code for batch in batches for code in batch] == EXPECTED_CODES
    assert requests_to(sb.stats(), SCHOOLS) == 5


def test_an_expired_page_token_mid_traversal_still_yields_every_record_exactly_once(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(450), page_token_ttl=1.0)

    async def go() -> list[str]:
        async with ApiClient(environment_for(sb), profile) as client:
            # A one-page buffer makes the producer wait for the consumer, so its token dies.
            return await _consume_slowly(client, prefetch=1, pause_after=150, pause_s=1.4)

    assert run(go()) == EXPECTED_CODES
    assert requests_to(sb.stats(), SCHOOLS) > 5  # the traversal restarted from page 1


def test_restarts_after_refused_page_tokens_are_bounded(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(250), page_token_ttl=0.05, faults=FaultOptions(latency_ms=120))

    async def go() -> None:
        async with ApiClient(environment_for(sb), profile) as client:
            await client.fetch_collection("school")

    with pytest.raises(ValidationFailed) as caught:
        run(go())
    assert is_page_token_refusal(caught.value)
    assert requests_to(sb.stats(), SCHOOLS) == 2 * 4  # the first traversal and three restarts


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- stop rules, against collections served by a plain function (shapes the sandbox does not take) --


def _serve(
    records: list[dict[str, Any]], page_size: int, *, token_on_last: bool, with_total: bool, with_page_total: bool
) -> tuple[Any, list[Mapping[str, str]]]:
    calls: list[Mapping[str, str]] = []

    async def fetch_page(params: Mapping[str, str]) -> Page:
        calls.append(dict(params))
        start = int(params.get("page_token", "0"))
        chunk = records[start : start + page_size]
        end = start + len(chunk)
        more = end < len(records)
        return Page(
            records=tuple(chunk),
            total=len(records) if with_total else None,
            page_total=len(chunk) if with_page_total else None,
            page_token=str(end) if more or token_on_last else None,
        )

    return fetch_page, calls


async def _all(fetch_page: Any, page_size: int, **kw: Any) -> list[dict[str, Any]]:
    return [r async for r in flattened(iter_batches(fetch_page, page_size=page_size, **kw))]


@settings(max_examples=60, deadline=None)
@given(
    count=st.integers(min_value=0, max_value=260),
    page_size=st.integers(min_value=1, max_value=120),
    token_on_last=st.booleans(),
    with_total=st.booleans(),
    with_page_total=st.booleans(),
)
def test_every_record_is_yielded_once_whatever_the_last_page_looks_like(
    count, page_size, token_on_last, with_total, with_page_total
):
    records = [{"id": f"r{i}"} for i in range(count)]
    fetch_page, calls = _serve(
        records, page_size, token_on_last=token_on_last, with_total=with_total, with_page_total=with_page_total
    )
    assert asyncio.run(_all(fetch_page, page_size)) == records
    full_pages = -(-count // page_size) if count else 1
    # One extra (empty) page only when nothing else says the last full page was the last; a page
    # asked for ahead of its page's checks is never one the stop rules would not have asked for.
    extra = token_on_last and not with_total and count > 0 and count % page_size == 0
    assert len(calls) == full_pages + extra


def test_a_token_that_keeps_coming_with_the_same_records_ends_the_traversal():
    calls = []

    async def fetch_page(params: Mapping[str, str]) -> Page:
        calls.append(params)
        return Page(records=({"id": "a"}, {"id": "b"}), total=None, page_total=2, page_token="again")

    assert asyncio.run(_all(fetch_page, 2)) == [{"id": "a"}, {"id": "b"}]
    assert len(calls) == 2


def test_filters_go_on_the_first_request_and_only_the_token_on_later_ones():
    records = [{"id": f"r{i}"} for i in range(5)]
    fetch_page, calls = _serve(records, 2, token_on_last=True, with_total=True, with_page_total=True)
    filtered = fetch_page

    async def with_filters() -> list[dict[str, Any]]:
        return await _all(filtered, 2, filters={"code": "X"})

    asyncio.run(with_filters())
    assert calls[0] == {"code": "X"}
    assert all(set(call) == {"page_token"} for call in calls[1:])


def test_a_failure_that_is_not_about_the_page_token_propagates_at_once():
    async def fetch_page(params: Mapping[str, str]) -> Page:
        raise ValidationFailed(400, "ValidationError: unknown filter 'colour'")

    with pytest.raises(ValidationFailed, match="unknown filter"):
        asyncio.run(_all(fetch_page, 100))


@settings(max_examples=40, deadline=None)
@given(
    count=st.integers(min_value=1, max_value=300),
    page_size=st.integers(min_value=1, max_value=100),
    refusals=st.lists(st.integers(min_value=1, max_value=12), max_size=3, unique=True),
)
def test_refused_page_tokens_restart_from_page_one_with_the_filters_and_skip_what_was_yielded(
    count, page_size, refusals
):
    records = [{"id": f"r{i}"} for i in range(count)]
    serve, calls = _serve(records, page_size, token_on_last=False, with_total=True, with_page_total=True)
    token_uses = {"n": 0}

    async def refusing(params: Mapping[str, str]) -> Page:
        if "page_token" in params:
            token_uses["n"] += 1
            if token_uses["n"] in refusals:
                calls.append(dict(params))
                raise ValidationFailed(400, "ValidationError: page token expired")
        return await serve(params)

    yielded = asyncio.run(_all(refusing, page_size, filters={"kind": "k"}))
    assert yielded == records
    first_pages = [call for call in calls if "page_token" not in call]
    assert all(call == {"kind": "k"} for call in first_pages)
    assert len(first_pages) <= 1 + len(refusals)


def test_leaving_the_loop_early_stops_the_page_producer():
    fetched = []

    async def endless(params: Mapping[str, str]) -> Page:
        await asyncio.sleep(0)  # as any real request would, give the loop a turn
        fetched.append(params)
        n = len(fetched)
        return Page(records=({"id": f"r{n}"},), total=None, page_total=1, page_token=f"t{n}")

    async def go() -> set[asyncio.Task[Any]]:
        pages = flattened(iter_batches(endless, page_size=1))
        async for _ in pages:
            break
        await pages.aclose()  # type: ignore[attr-defined]
        await asyncio.sleep(0.05)
        return asyncio.all_tasks() - {asyncio.current_task()}

    assert asyncio.run(go()) == set()
    assert len(fetched) < 1000


# -- the next page asked for ahead of this page's checks --------------------------------------------


def _pages_of_two(events: list[str], records: int = 5) -> Any:
    """A collection of `records` in pages of two (with `total`), logging each fetch's start."""

    async def fetch_page(params: Mapping[str, str]) -> Page:
        start = int(params.get("page_token", "0"))
        events.append(f"fetch {start}")
        await asyncio.sleep(0)
        end = min(start + 2, records)
        return Page(
            records=tuple({"id": f"r{i}"} for i in range(start, end)),
            total=records,
            page_total=end - start,
            page_token=str(end) if end < records else None,
        )

    return fetch_page


def test_the_next_page_is_asked_for_before_this_page_is_checked():
    events: list[str] = []

    def check(page: Page) -> None:
        events.append(f"check {page.records[0]['id']}")

    records = asyncio.run(_all(_pages_of_two(events), 2, check=check))
    assert [r["id"] for r in records] == [f"r{i}" for i in range(5)]
    assert events == ["fetch 0", "fetch 2", "check r0", "fetch 4", "check r2", "check r4"]


def test_a_bounded_buffer_that_is_full_holds_the_next_request_back():
    events: list[str] = []

    async def go() -> list[str]:
        seen = []
        async for record in flattened(iter_batches(_pages_of_two(events, records=7), page_size=2, prefetch=1)):
            seen.append(record["id"])
            if len(seen) == 1:
                # The producer has filled the one-page buffer and holds the next page: nothing more.
                await asyncio.sleep(0.05)
                assert len([e for e in events if e.startswith("fetch")]) <= 3
        return seen

    assert asyncio.run(go()) == [f"r{i}" for i in range(7)]


def _no_task_left_and_nothing_unretrieved(go: Any) -> Any:
    """Run `go()`, then check no task outlives it and no task's exception went unread."""
    problems: list[dict[str, Any]] = []

    async def watched() -> Any:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: problems.append(context))
        try:
            return await go()
        finally:
            await asyncio.sleep(0.05)
            assert asyncio.all_tasks() == {asyncio.current_task()}
            gc.collect()  # an unread exception is reported when its task is collected

    result = asyncio.run(watched())
    gc.collect()
    assert problems == []
    return result


def test_a_malformed_page_cancels_the_request_already_asked_for():
    started: list[str] = []
    cancelled: list[str] = []

    async def fetch_page(params: Mapping[str, str]) -> Page:
        token = params.get("page_token")
        if token is None:
            return Page(records=({"id": "a"}, {"id": "b"}), total=None, page_total=2, page_token="t2")
        started.append(token)
        try:
            await asyncio.sleep(30)  # a slow page: still in flight when page 1 is found malformed
        except asyncio.CancelledError:
            cancelled.append(token)
            raise
        raise AssertionError("never answered")

    _no_task_left_and_nothing_unretrieved(_refused_as_malformed(fetch_page))
    assert started == ["t2"]
    assert cancelled == ["t2"]


def test_a_malformed_page_wins_over_a_failure_of_the_request_asked_for_after_it():
    async def fetch_page(params: Mapping[str, str]) -> Page:
        if "page_token" in params:
            raise ValidationFailed(400, "ValidationError: page token expired")
        return Page(records=({"id": "a"}, {"id": "b"}), total=None, page_total=2, page_token="t2")

    _no_task_left_and_nothing_unretrieved(_refused_as_malformed(fetch_page))


def _refused_as_malformed(fetch_page: Any) -> Any:
    """A traversal whose every page its check finds malformed: it must raise MalformedAnswer."""

    def check(page: Page) -> None:
        raise MalformedAnswer("the service answered a malformed list: record 2 ...")

    async def go() -> None:
        with pytest.raises(MalformedAnswer):
            await _all(fetch_page, 2, check=check)

    return go


def test_a_page_token_refused_on_the_page_asked_for_ahead_restarts_from_page_one():
    refused = {"left": 2}
    calls: list[Mapping[str, str]] = []

    async def fetch_page(params: Mapping[str, str]) -> Page:
        calls.append(dict(params))
        await asyncio.sleep(0)
        start = int(params.get("page_token", "0"))
        if start == 4 and refused["left"]:
            refused["left"] -= 1
            raise ValidationFailed(400, "ValidationError: page token expired")
        end = min(start + 2, 7)
        return Page(
            records=tuple({"id": f"r{i}"} for i in range(start, end)),
            total=7,
            page_total=end - start,
            page_token=str(end) if end < 7 else None,
        )

    async def go() -> list[dict[str, Any]]:
        return await _all(fetch_page, 2, filters={"kind": "k"})

    assert [r["id"] for r in _no_task_left_and_nothing_unretrieved(go)] == [f"r{i}" for i in range(7)]
    tokens = [call.get("page_token", "first") for call in calls]
    assert tokens == ["first", "2", "4"] * 3 + ["6"]
    assert [call for call in calls if "page_token" not in call] == [{"kind": "k"}] * 3


def test_cancelling_the_consumer_cancels_the_page_request_in_flight(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(450), faults=FaultOptions(latency_ms=300))

    async def go() -> int:
        got: list[str] = []
        first = asyncio.Event()

        async def consume(client: ApiClient) -> None:
            async for record in client.iter_collection("school"):
                got.append(record["code"])
                first.set()

        async with ApiClient(environment_for(sb), profile) as client:
            consumer = asyncio.create_task(consume(client))
            await first.wait()  # page 1 arrived; page 2 was asked for at once and is in flight
            consumer.cancel()
            with pytest.raises(asyncio.CancelledError):
                await consumer
            return len(got)

    assert _no_task_left_and_nothing_unretrieved(go) == 100
    assert requests_to(sb.stats(), SCHOOLS) <= 2


@pytest.mark.parametrize("count", [300, 450])
def test_a_collection_takes_one_request_a_page(start_sandbox, profile, count):
    sb = start_sandbox(seed=schools_seed(count))

    async def go() -> list[str]:
        async with ApiClient(environment_for(sb), profile) as client:
            return [r["code"] async for r in client.iter_collection("school")]

    assert run(go()) == [f"S{i:05d}" for i in range(count)]
    assert requests_to(sb.stats(), SCHOOLS) == -(-count // 100)


def test_pages_that_fail_and_are_retried_still_yield_every_record_once_in_order(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(450), faults=FaultOptions(error_rate=0.3, seed=7))

    async def go() -> list[str]:
        async with ApiClient(environment_for(sb), profile) as client:
            return [r["code"] async for r in client.iter_collection("school")]

    assert run(go()) == EXPECTED_CODES
    assert requests_to(sb.stats(), SCHOOLS) > 5  # some pages were answered 500/503 and asked again


def test_pages_read_leave_nothing_for_the_cyclic_collector(start_sandbox, profile):
    """An answer in a reference cycle (httpx's response and its stream) would keep every page's body
    until the collector next runs; with the collector off here, until the process ends."""
    sb = start_sandbox(seed=schools_seed(450))

    async def go() -> int:
        async with ApiClient(environment_for(sb), profile) as client:
            [_ async for _ in client.iter_collection_batches("school")]  # the token asked for first
            gc.collect()
            enabled = gc.isenabled()
            gc.disable()
            gc.set_debug(gc.DEBUG_SAVEALL)
            try:
                pages = [batch async for batch in client.iter_collection_batches("school")]
                gc.collect()
                left = [o for o in gc.garbage if type(o).__module__.startswith(("httpx", "aiohttp"))]
            finally:
                gc.set_debug(0)
                gc.garbage.clear()
                if enabled:
                    gc.enable()
            assert len(pages) == 5
            return len(left)

    assert run(go()) == 0
