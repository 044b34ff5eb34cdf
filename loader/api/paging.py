"""Paging through a collection (spec section 8): follow `page_token`, stop right, survive expiry.

A traversal stops when a page brings no token, no records, or no record not seen before in this
traversal (so a token that keeps coming cannot loop forever), or when the records seen reach
`total`; without a `total`, a page shorter than the page size is the last. Pages are fetched eagerly
by a producer task into a buffer, so a slow consumer never lets a page token die (tokens live a
minute between page requests). The next page is asked for as soon as a page is read, before its
records are checked and handed on, when no stop rule can hold for that page and the buffer has room
(so nothing is asked for that the rules would not ask for, and `prefetch` keeps its bound); a
request asked for ahead is cancelled if its page turns out malformed. If a page token is refused
or expired anyway, the traversal restarts from the first page (same filters) and records already
yielded are skipped by id; restarts are bounded.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing, suppress
from dataclasses import dataclass
from typing import Any

from loader.api.errors import HttpError, MalformedAnswer
from loader.api.shapes import kind, record_problem
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
CheckPage = Callable[[Page], None]


_DEFAULT_ENVELOPE = Envelope()


MALFORMED_HINT = "the service does not answer as its API says: check base_url, else report it to the platform operator"
_SCALARS = (str, int, float, bool, type(None))
_PLAIN = frozenset(_SCALARS)  # exact types, looked up before the slower isinstance
_ID_TYPES = (str, int)


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
    page = read_page(body, names, path=path)
    check_records(page.records, path=path, checked_fields=checked_fields)
    return page


def read_page(body: Mapping[str, Any], names: Envelope = _DEFAULT_ENVELOPE, *, path: str | None = None) -> Page:
    """A Page from a decoded envelope with its records not yet checked (`check_records` does that).

    Only the list itself must be a list here; the per-record checks can wait until the next page
    has been asked for.
    """
    data = body.get(names.data)
    if data is None:
        data = []
    if not isinstance(data, list):
        raise _malformed(f"`{names.data}` is {type(data).__name__}, not a list of records", path)
    token = body.get(names.page_token)
    return Page(
        records=tuple(data),
        total=_count_or_none(body.get(names.total), names.total, path),
        page_total=_count_or_none(body.get(names.page_total), names.page_total, path),
        page_token=token if isinstance(token, str) and token else None,
    )


def check_records(
    records: tuple[object, ...], *, path: str | None = None, checked_fields: tuple[str, ...] = ()
) -> None:
    """Raise MalformedAnswer unless every record is an object whose id and `checked_fields` are values."""
    names = ("id", *checked_fields)
    for position, record in enumerate(records):
        if not isinstance(record, dict):
            raise _malformed(f"record {position + 1} of the list is {kind(record)}, not an object", path)
        problem = record_problem(record)
        if problem is not None:
            raise _malformed(f"{_named(record, position)}: {problem}", path)
        for name in names:
            value = record.get(name)
            if value.__class__ in _PLAIN or isinstance(value, _SCALARS):  # the common case first
                continue
            if not (isinstance(value, dict) and isinstance(value.get("id"), _SCALARS)):
                raise _malformed(
                    f"record {position + 1} of the list has {type(value).__name__} in `{name}`, not a value", path
                )


def _named(record: dict[str, Any], position: int) -> str:
    """`record 3 of the list (id ...)`: where the record is, and its id when it has a plain one."""
    ident = record.get("id")
    plain = isinstance(ident, str | int) and not isinstance(ident, bool) and len(str(ident)) <= 64
    return f"record {position + 1} of the list" + (f" (id {ident})" if plain else "")


def _malformed(message: str, path: str | None) -> MalformedAnswer:
    return MalformedAnswer(
        f"the service answered a malformed list: {message}",
        method="GET" if path else None,
        path=path,
        hint=MALFORMED_HINT,
    )


def _count_or_none(value: object, name: str, path: str | None) -> int | None:
    """A count of the envelope (`total`, `page_total`); None when it is not a number. A negative
    or endless one (NaN, Infinity: the standard parser reads them) is a malformed answer."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    if value != value or value in (float("inf"), float("-inf")) or value < 0:
        raise _malformed(f"`{name}` is {value}, not a count of records", path)
    return int(value)


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
    if ident.__class__ is str:  # the common case, without formatting
        return "id:" + ident
    if isinstance(ident, _ID_TYPES) and not isinstance(ident, bool):
        return f"id:{ident}"
    return "content:" + json.dumps(record, sort_keys=True, default=str)


async def flattened(batches: AsyncIterator[tuple[dict[str, Any], ...]]) -> AsyncIterator[dict[str, Any]]:
    """The records of `batches`, one at a time; `batches` is closed when this is (its traversal stops)."""
    async with aclosing(batches):  # type: ignore[type-var]
        async for batch in batches:
            for record in batch:
                yield record


async def iter_batches(
    fetch_page: FetchPage,
    *,
    filters: Mapping[str, str] | None = None,
    token_param: str = "page_token",
    page_size: int = 100,
    prefetch: int | None = None,
    max_restarts: int = MAX_RESTARTS,
    label: str = "collection",
    check: CheckPage | None = None,
) -> AsyncIterator[tuple[dict[str, Any], ...]]:
    """Every record of a collection exactly once, in service order, a page at a time: each page's
    records not seen before (never empty). `flattened(...)` gives them one at a time.

    `prefetch` bounds the pages buffered ahead of the consumer (None: unbounded, the default, so a
    slow consumer cannot make a page token expire). `check` (when given) vets each page after the
    next page has been asked for; what it raises ends the traversal as a failed fetch would.
    """
    buffer: asyncio.Queue[object] = asyncio.Queue(maxsize=prefetch or 0)
    chain = _Chain(fetch_page, dict(filters or {}), token_param, page_size, check or _unchecked)
    producer = asyncio.create_task(_produce(buffer, chain, max_restarts, label))
    try:
        while True:
            item = await buffer.get()
            if item is _END:
                break
            if isinstance(item, _Failure):
                raise item.error
            assert isinstance(item, tuple)
            yield item
    finally:
        producer.cancel()
        with suppress(asyncio.CancelledError):
            await producer


def _unchecked(page: Page) -> None:
    """The default `check`: pages from a plain `fetch_page` come checked already."""


class _End:
    pass


_END = _End()


@dataclass(frozen=True)
class _Failure:
    error: Exception


@dataclass(frozen=True)
class _Chain:
    """How one traversal asks for its pages."""

    fetch_page: FetchPage
    filters: dict[str, str]
    token_param: str
    page_size: int
    check: CheckPage

    async def after(self, page: Page) -> Page:
        assert page.page_token is not None
        return await self.fetch_page({self.token_param: page.page_token})


Deliver = Callable[[Page, list[str]], Awaitable[None]]


async def _produce(buffer: asyncio.Queue[object], chain: _Chain, max_restarts: int, label: str) -> None:
    yielded: set[str] = set()

    async def deliver(page: Page, identities: list[str]) -> None:
        distinct = set(identities)
        if len(distinct) == len(identities) and yielded.isdisjoint(distinct):
            # The usual page: every record new. The loop below gives the same, record by record.
            yielded.update(distinct)
            fresh = page.records
        else:
            fresh = _fresh(page.records, identities, yielded)
        if fresh:
            await buffer.put(fresh)

    def room() -> bool:
        # A page only goes ahead while this page's hand-off cannot wait: `prefetch` keeps its bound.
        return not buffer.full()

    restarts = 0
    try:
        while True:
            try:
                await _traverse(chain, deliver, room)
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


def _fresh(records: tuple[dict[str, Any], ...], identities: list[str], yielded: set[str]) -> tuple[dict[str, Any], ...]:
    """The records not yielded yet (a record twice in the page: its first time), noted as yielded."""
    fresh = []
    for record, identity in zip(records, identities, strict=True):
        if identity not in yielded:
            yielded.add(identity)
            fresh.append(record)
    return tuple(fresh)


async def _traverse(chain: _Chain, deliver: Deliver, room: Callable[[], bool]) -> None:
    """Hand each page with its records' identities to `deliver`, until a stop rule says so.

    When a page certainly is not the last (`_surely_more`), the next page is asked for before this
    one is checked, identified and handed on, so that work is off the chain of round trips; a
    request asked for ahead is cancelled (and awaited) if this page turns out malformed or the
    traversal is cancelled.
    """
    seen: set[str] = set()
    page = await chain.fetch_page(chain.filters)
    while True:
        ahead = _ask_ahead(chain, page) if room() and _surely_more(page, seen, chain.page_size) else None
        try:
            if ahead is not None:
                await asyncio.sleep(0)  # one turn of the loop: the request goes out now
            chain.check(page)
            identities = [record_identity(r) for r in page.records]
            new = set(identities) - seen
            seen |= new
            await deliver(page, identities)
            if ahead is None:
                if _is_last(page, len(seen), chain.page_size, brought_new=bool(new)):
                    return
                page = await chain.after(page)
            else:
                page = await ahead
        finally:
            if ahead is not None:
                await _settle(ahead)


def _ask_ahead(chain: _Chain, page: Page) -> asyncio.Task[Page]:
    task = asyncio.create_task(chain.after(page))
    task.add_done_callback(_retrieve)
    return task


def _retrieve(task: asyncio.Task[Page]) -> None:
    """Mark a request's outcome as seen: one dropped unread is no error to report."""
    if not task.cancelled():
        task.exception()


async def _settle(task: asyncio.Task[Page]) -> None:
    """Cancel a request asked for ahead and wait until it has stopped (nothing left running)."""
    if not task.done():
        task.cancel()
        await asyncio.wait({task})


def _surely_more(page: Page, seen: set[str], page_size: int) -> bool:
    """True when no stop rule can hold for `page`, decided before its records are identified.

    The page must bring a token, records and (when the service counts) room below `total` even if
    every record were new; its first record being new proves it brings something new. Anything
    less certain (the first record seen already, or not an object) waits for the full check.
    """
    records = page.records
    if not page.page_token or not records or page.page_total == 0:
        return False
    if page.total is None:
        if len(records) < page_size:
            return False
    elif len(seen) + len(records) >= page.total:
        return False
    first = records[0]
    return isinstance(first, dict) and record_identity(first) not in seen


def _is_last(page: Page, seen: int, page_size: int, *, brought_new: bool) -> bool:
    if not page.page_token or not page.records or page.page_total == 0 or not brought_new:
        return True
    if page.total is not None:
        return seen >= page.total
    return len(page.records) < page_size
