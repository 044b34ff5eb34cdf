"""HTTP for the sources that read a URL (JSON and XML feeds): pages fetched one after another.

`walk_pages(first, visit, where, access=...)` GETs `first`, hands each page to `visit`, and GETs the
URL `visit` returns until it returns None; what a page says about the next one (a link in the
body, a `Link` header, a page number) is the reader's business, not this module's.

- `https://` is required except for loopback hosts; TLS is always verified (`ca_bundle` may name
  a CA file). A URL holding a user name or password is refused (credentials come from `{env: …}`).
- Authentication: `headers` (each value a Secret, e.g. `Authorization`), or OAuth2 client
  credentials through `loader.api.auth.TokenAuth` (one token, renewed before expiry and once on a
  401). Credentials go only to the first URL's origin: a next page elsewhere is refused.
- 429, 500, 502, 503, 504, timeouts and dropped connections are retried with exponential backoff,
  a `Retry-After` replacing the computed wait (capped as the client caps it).
- A URL seen twice (a loop of next links) and more than `limits` pages are errors.

Every error is a SheetError naming the source (`where`) and the page's URL without its query
(which may hold a token); secrets never appear in messages (they are registered with
`loader.redaction`).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx

from loader.api.auth import TokenAuth, origin_of
from loader.api.retry import MAX_RETRY_AFTER_S, RETRIED_STATUSES, parse_retry_after
from loader.config import Secret, is_loopback_host
from loader.errors import SheetError
from loader.url_text import shown_url

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_ATTEMPTS = 5
MAX_PAGES = 100_000
_T = TypeVar("_T")


@dataclass(frozen=True)
class ClientCredentials:
    """OAuth2 client credentials: a token from `token_url` for the client, sent as a Bearer token."""

    token_url: str
    client_id: str
    client_secret: Secret


@dataclass(frozen=True)
class FeedAccess:
    """How to reach a feed: headers to send, client credentials, TLS, timeout and retries."""

    headers: Mapping[str, Secret] = field(default_factory=dict)
    credentials: ClientCredentials | None = None
    ca_bundle: Path | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    attempts: int = DEFAULT_ATTEMPTS
    wait_initial_s: float = 0.5
    wait_max_s: float = 10.0


@dataclass(frozen=True)
class FeedPage:
    """One page as fetched: its URL, body and headers, and the next page its `Link` header names."""

    url: str
    body: bytes
    headers: httpx.Headers
    link_next: str | None


def check_feed_url(url: str, where: str) -> str:
    """`url` if the loader may fetch it: http(s), https unless loopback, no credentials in it."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        raise SheetError("the feed's URL is not a valid address", where=where) from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise SheetError("the feed's URL is not an http(s) address", where=where, hint="e.g. https://host/courses")
    if parsed.userinfo:
        raise SheetError("the feed's URL must not hold a user name or password", where=where,
                         hint="send credentials with headers: or auth:, each from {env: NAME}")
    if parsed.scheme != "https" and not is_loopback_host(parsed.host):
        raise SheetError(f"the feed's URL must use https:// (host {parsed.host})", where=where,
                         hint="plain http:// is allowed only for loopback hosts (127.0.0.1, ::1, localhost)")
    return url


def walk_pages(first: str, visit: Callable[[FeedPage], str | None], where: str, *,
               access: FeedAccess | None = None) -> int:
    """Fetch `first` and every page `visit` names next; the number of pages fetched. With
    `functools.partial(walk_pages, access=...)` it is the `WalkPages` the JSON and XML readers take."""
    access = access or FeedAccess()
    check_feed_url(first, where)
    return run_apart(_walk(first, visit, access, where))


def run_apart(work: Coroutine[Any, Any, _T]) -> _T:
    """Run `work` to its end from synchronous code: on this thread, or on a thread of its own when
    this one already runs an event loop (a reader called from async code)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, work).result()


async def _walk(first: str, visit: Callable[[FeedPage], str | None], access: FeedAccess, where: str) -> int:
    origin = origin_of(first)
    auth = None
    if access.credentials is not None:
        given = access.credentials
        auth = TokenAuth(given.token_url, given.client_id, given.client_secret, allowed_origins=(first,))
    headers = {name: value.reveal() for name, value in access.headers.items()}
    verify: ssl.SSLContext | bool = (ssl.create_default_context(cafile=str(access.ca_bundle))
                                     if access.ca_bundle else True)
    seen: set[str] = set()
    url: str | None = first
    async with httpx.AsyncClient(auth=auth, headers=headers, verify=verify, timeout=access.timeout_s,
                                 follow_redirects=False) as client:
        while url is not None:
            if url in seen:
                raise SheetError(f"the page {shown_url(url)} names a next page already read (a loop)", where=where)
            if len(seen) >= MAX_PAGES:
                raise SheetError(f"the feed has more than {MAX_PAGES:,} pages", where=where)
            if origin_of(url) != origin:
                raise SheetError(f"a next page is on another origin ({shown_url(url)}); its credentials are not "
                                 "sent there and it is not read", where=where)
            seen.add(url)
            page = await _get(client, url, access, where)
            following = visit(page)
            url = str(httpx.URL(page.url).join(following)) if following else None
    return len(seen)


async def _get(client: httpx.AsyncClient, url: str, access: FeedAccess, where: str) -> FeedPage:
    """One page, retried as the module docstring says."""
    for attempt in range(1, access.attempts + 1):
        last = attempt == access.attempts
        try:
            response = await client.get(url)
        except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            if last:
                raise SheetError(f"cannot read {shown_url(url)}: {_reason(exc)} (tried {attempt} times)",
                                 where=where, hint="check the address and the network; run again later") from None
            await asyncio.sleep(_backoff(attempt, access))
            continue
        if response.status_code in RETRIED_STATUSES and not last:
            told = parse_retry_after(response.headers.get("Retry-After"))
            await asyncio.sleep(min(told, MAX_RETRY_AFTER_S) if told is not None else _backoff(attempt, access))
            continue
        if not response.is_success:
            raise SheetError(f"the server answered {response.status_code} {response.reason_phrase} for "
                             f"{shown_url(url)}", where=where, hint=_status_hint(response.status_code))
        following = response.links.get("next", {}).get("url")
        return FeedPage(str(response.url), response.content, response.headers, following)
    raise AssertionError("unreachable: the last attempt returns or raises")  # pragma: no cover


def _backoff(attempt: int, access: FeedAccess) -> float:
    return float(min(access.wait_initial_s * 2 ** (attempt - 1), access.wait_max_s))


def _reason(exc: httpx.HTTPError) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return "no answer in time"
    if isinstance(exc, httpx.ConnectError):
        return "the connection was refused or the host is unknown"
    return "the connection was dropped"


def _status_hint(status: int) -> str:
    if status in (401, 403):
        return "check the feed's auth: or headers: and the variables they read"
    if status == 404:
        return "check the feed's URL"
    return "the server refused the request; run again later, or ask its operator"
