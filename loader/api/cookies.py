"""httpx's client with a cookie jar that skips the answers that set no cookie (on the page chain)."""

from __future__ import annotations

from typing import Any

import httpx
from httpx._types import CookieTypes  # the type httpx's own `cookies` setter takes


class AnswerCookies(httpx.Cookies):
    """httpx's cookie jar, which skips the answers that set no cookie.

    httpx offers every answer to the jar, wrapped as a urllib request and response (~0.05 ms, on the
    page chain); the jar takes cookies from `Set-Cookie` and `Set-Cookie2` only, so an answer with
    neither leaves it as it was either way.
    """

    def extract_cookies(self, response: httpx.Response) -> None:
        headers = response.headers
        if "set-cookie" in headers or "set-cookie2" in headers:
            super().extract_cookies(response)


class HttpClient(httpx.AsyncClient):
    """httpx's client, keeping its cookies (sent back as before) in an `AnswerCookies` jar."""

    def __init__(self, **options: Any) -> None:
        self._answer_cookies = AnswerCookies()
        super().__init__(**options)

    @property
    def cookies(self) -> httpx.Cookies:
        return self._answer_cookies

    @cookies.setter
    def cookies(self, cookies: CookieTypes) -> None:
        self._answer_cookies = AnswerCookies(cookies)
