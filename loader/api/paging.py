"""Paging through a collection (spec section 8): follow `page_token`, stop right, survive expiry.

A traversal stops when a page brings no token, no records, or no record not seen before in this
traversal (so a token that keeps coming cannot loop forever), or when the records seen reach
`total`; without a `total`, a page shorter than the page size is the last. Pages are fetched eagerly
by a producer task into a buffer, so a slow consumer never lets a page token die (tokens live a
minute between page requests). If a page token is refused or expired anyway, the traversal restarts
from the first page (same filters) and records already yielded are skipped by id; restarts are
bounded.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from loader.api.errors import HttpError, MalformedAnswer
from loader.profile import Envelope

MAX_RESTARTS = 3
_PAGE_TOKEN_WORDS = re.compile(r"page[ _-]?token", re.IGNORECASE)

log = logging.getLogger("loader.http")


@dataclass(frozen=True)
class Page:
    """One decoded collection response."""

    records: tuple[dict[str, Any], ...]
    total: int | None
    page_total: int | None
    page_token: str | None


FetchPage = Callable[[Mapping[str, str]], Awaitable[Page]]


_DEFAULT_ENVELOPE = Envelope()


MALFORMED_HINT = "the service does not answer as its API says: check base_url, else report it to the platform operator"
_SCALARS = (str, int, float, bool, type(None))


def page_from_envelope(
    body: Mapping[str, Any],
    names: Envelope = _DEFAULT_ENVELOPE,
    *,
    path: str | None = None,
    checked_fields: tuple[str, ...] = (),
) -> Page:
    """A Page from a decoded collection envelope; missing counts and tokens become None.

    A list that is not a list, a record that is not an object, or a record whose id or one of
    `checked_fields` (the key and unique fields) is neither a plain value nor a `{"id": ...}`
    reference raises MalformedAnswer: the planner matches records by these and must not guess.
    """
    data = body.get(names.data)
    if data is None:
        data = []
    if not isinstance(data, list):
        raise _malformed(f"`{names.data}` is {type(data).__name__}, not a list of records", path)
    for position, record in enumerate(data):
        if not isinstance(record, dict):
            raise _malformed(f"record {position + 1} of the list is {type(record).__name__}, not an object", path)
        for name in ("id", *checked_fields):
            value = record.get(name)
            if isinstance(value, dict) and isinstance(value.get("id"), _SCALARS):
                continue
            if not isinstance(value, _SCALARS):
                raise _malformed(
                    f"record {position + 1} of the list has {type(value).__name__} in `{name}`, not a value", path
                )
    records = tuple(data)
    token = body.get(names.page_token)
    return Page(
        records=records,
        total=_int_or_none(body.get(names.total)),
        page_total=_int_or_none(body.get(names.page_total)),
        page_token=token if isinstance(token, str) and token else None,
    )


def _malformed(message: str, path: str | None) -> MalformedAnswer:
    return MalformedAnswer(
        f"the service answered a malformed list: {message}",
        method="GET" if path else None,
        path=path,
        hint=MALFORMED_HINT,
    )


def _int_or_none(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def is_page_token_refusal(error: Exception) -> bool:
    """True for the service refusing a page token (400 `ValidationError: page token expired`)."""
    return (
        isinstance(error, HttpError)
        and error.status in (400, 404, 410)
        and bool(_PAGE_TOKEN_WORDS.search(error.service_message))
    )


def record_identity(record: Mapping[str, Any]) -> str:
    """The id of a record; records without one are identified by their whole content."""
    ident = record.get("id")
    if isinstance(ident, str | int) and not isinstance(ident, bool):
        return f"id:{ident}"
    return "content:" + json.dumps(record, sort_keys=True, default=str)


async def iter_records(
    fetch_page: FetchPage,
    *,
    filters: Mapping[str, str] | None = None,
    token_param: str = "page_token",
    page_size: int = 100,
    prefetch: int | None = None,
    max_restarts: int = MAX_RESTARTS,
    label: str = "collection",
) -> AsyncIterator[dict[str, Any]]:
    """Every record of a collection exactly once, in service order.

    `prefetch` bounds the pages buffered ahead of the consumer (None: unbounded, the default, so a
    slow consumer cannot make a page token expire).
    """
    buffer: asyncio.Queue[object] = asyncio.Queue(maxsize=prefetch or 0)
    producer = asyncio.create_task(
        _produce(buffer, fetch_page, dict(filters or {}), token_param, page_size, max_restarts, label)
    )
    try:
        while True:
            item = await buffer.get()
            if item is _END:
                break
            if isinstance(item, _Failure):
                raise item.error
            assert isinstance(item, tuple)
            for record in item:
                yield record
    finally:
        producer.cancel()
        with suppress(asyncio.CancelledError):
            await producer


class _End:
    pass


_END = _End()


@dataclass(frozen=True)
class _Failure:
    error: Exception


async def _produce(
    buffer: asyncio.Queue[object],
    fetch_page: FetchPage,
    filters: dict[str, str],
    token_param: str,
    page_size: int,
    max_restarts: int,
    label: str,
) -> None:
    yielded: set[str] = set()
    restarts = 0
    try:
        while True:
            try:
                async for page, identities in _traverse(fetch_page, filters, token_param, page_size):
                    fresh = []
                    for record, identity in zip(page.records, identities, strict=True):
                        if identity not in yielded:
                            yielded.add(identity)
                            fresh.append(record)
                    if fresh:
                        await buffer.put(tuple(fresh))
                break
            except HttpError as error:
                if not is_page_token_refusal(error) or restarts >= max_restarts:
                    raise
                restarts += 1
                log.info(
                    "page token refused (%s): restarting %s from page 1 (restart %d of %d)",
                    error.service_message,
                    label,
                    restarts,
                    max_restarts,
                )
    except Exception as error:
        await buffer.put(_Failure(error))
        return
    await buffer.put(_END)


async def _traverse(
    fetch_page: FetchPage, filters: dict[str, str], token_param: str, page_size: int
) -> AsyncIterator[tuple[Page, list[str]]]:
    """Each page with its records' identities."""
    seen: set[str] = set()
    page = await fetch_page(filters)
    while True:
        identities = [record_identity(r) for r in page.records]
        new = set(identities) - seen
        seen |= new
        yield page, identities
        if _is_last(page, len(seen), page_size, brought_new=bool(new)):
            return
        assert page.page_token is not None
        page = await fetch_page({token_param: page.page_token})


def _is_last(page: Page, seen: int, page_size: int, *, brought_new: bool) -> bool:
    if not page.page_token or not page.records or page.page_total == 0 or not brought_new:
        return True
    if page.total is not None:
        return seen >= page.total
    return len(page.records) < page_size
