"""The direct lane: a request sent straight through the aiohttp session, without httpx's objects.

httpx's Request, Response, auth flow and hooks cost about as much CPU per write as aiohttp's own
sending (~0.35 ms against ~0.25 ms), and on a busy machine a write's CPU is its wall time. When
httpx would add nothing to a request, `ApiClient` sends it here, with the same headers, body and
timeouts httpx would send and the same accounting: counted and logged as one request, its failure
raised as the httpx error it stands for (loader.api.transport), its answer read as httpx would
read it. It sends only while a token is fresh and no cookie is kept; otherwise, and for an answer
that httpx must still process (a compressed body, a cookie to keep), httpx does it as before:

- a stale token (or none yet): the request goes through httpx's auth flow, which renews it;
- a 401: the token is marked refused and the request sent again through httpx, renewed once (a
  second 401 is final, as in the flow);
- `Content-Encoding` on the answer: httpx decodes the body; `Set-Cookie`: httpx's jar keeps it.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

import httpx
from multidict import CIMultiDict

from loader.api.answers import Answer
from loader.api.auth import TokenAuth
from loader.api.json_body import encoded
from loader.api.requestlog import ATTEMPT, STARTED, RequestObserver
from loader.api.transport import AiohttpTransport


class Handover(Enum):
    """Why the lane hands a request to httpx: it must go through the auth flow, or it met a 401."""

    HTTPX = "httpx"
    REFUSED = "refused"


class LaneAnswer:
    """An answer read whole by the lane: what `loader.api.answers` reads of an httpx.Response."""

    __slots__ = ("_raw", "content", "reason_phrase", "status_code")

    def __init__(self, status: int, raw: tuple[tuple[bytes, bytes], ...], content: bytes, reason: str | None):
        self.status_code = status
        self.content = content
        self.reason_phrase = reason or ""
        self._raw = raw

    @property
    def headers(self) -> Mapping[str, str]:
        return httpx.Headers(list(self._raw))

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


class DirectLane:
    """Sends through `transport`'s session for `http` (its headers, timeout and cookie jar) and `auth`."""

    def __init__(
        self, transport: AiohttpTransport, http: httpx.AsyncClient, auth: TokenAuth, observer: RequestObserver
    ) -> None:
        self._transport = transport
        self._http = http
        self._auth = auth
        self._observer = observer
        self._headers = dict(http.headers.items())  # Accept, Accept-Encoding, Connection, User-Agent
        self._timeout = transport.timeout_of(http.timeout.as_dict())
        self._heads: tuple[str, CIMultiDict[str], CIMultiDict[str]] | None = None  # per token: plain, JSON
        self._base_checked = False  # whether base_url's origin may receive the token (checked once)

    def _head(self, token: str, json: bool) -> CIMultiDict[str]:
        """The headers sent with `token` (with a JSON body's Content-Type), made once per token."""
        heads = self._heads
        if heads is None or heads[0] != token:
            plain = CIMultiDict(self._headers)
            plain["Authorization"] = f"Bearer {token}"
            with_body = plain.copy()
            with_body["Content-Type"] = "application/json"
            heads = self._heads = (token, plain, with_body)
        return heads[2] if json else heads[1]

    async def send(self, method: str, url: httpx.URL | str, json: Any, attempt: int) -> Answer | Handover:
        """The answer to one request, or why httpx must send it (see the module docstring). `url` is
        an httpx.URL, or the text of one on base_url (`loader.api.urls.RequestUrls.text`)."""
        if _kept_cookies(self._http.cookies):
            return Handover.HTTPX
        if isinstance(url, str):
            if not self._base_checked:
                self._auth.check_origin(self._http.base_url)
                self._base_checked = True
            token = self._auth.unexpired_token()
            text = url
        else:
            token = self._auth.fresh_token(url)
            text = str(url)
        if token is None:
            return Handover.HTTPX
        headers = self._head(token, json is not None)
        body = None if json is None else encoded(json)  # the bytes httpx's `json=` makes
        started = self._observer.sent(method)

        def request() -> httpx.Request:
            extensions = {ATTEMPT: attempt, STARTED: started}
            return httpx.Request(method, url, headers=headers, content=body, extensions=extensions)

        status, raw, content, reason, plain = await self._transport.exchange(
            method, text, headers, body, self._timeout, request
        )
        self._observer.answered(method, url, status, started, attempt)
        if status == 401:
            self._auth.refused(token)
            return Handover.REFUSED
        if not plain:  # a body to decode or a cookie to keep: httpx's Response does it
            response = httpx.Response(status, headers=list(raw), content=content, request=request())
            self._http.cookies.extract_cookies(response)
            return response
        return LaneAnswer(status, raw, content, reason)


def _kept_cookies(cookies: httpx.Cookies) -> bool:
    """Whether the jar may hold a cookie: its cookies by domain, as http.cookiejar keeps them, without
    walking them (an empty jar's walk cost a microsecond a write); the jar's own answer otherwise."""
    held = getattr(cookies.jar, "_cookies", None)
    return bool(held) if type(held) is dict else bool(cookies)
