"""An httpx transport over aiohttp: httpx's interface for the rest of the loader, aiohttp's pool below.

httpx's own transport (httpcore) costs about as much CPU per request as everything else the
loader does per write, and more as connections grow (encode/httpx#3215); aiohttp's connection pool
and HTTP parser cost a fraction of it. `ApiClient` keeps one httpx.AsyncClient (auth flow, event
hooks, base_url, timeouts) and sends through this transport when the connection is direct; with a
proxy in the environment it keeps httpx's transport, which honours every proxy variable as before.

The one thing that matters beyond speed is which httpx error a failure becomes, because the
client decides from it whether a request can have reached the service (`loader.api.translate`):
only a connection that could not be made (refused, DNS, TLS, connect timeout) becomes
ConnectError / ConnectTimeout ("not sent"); a connection lost or a read timing out after the
request was written becomes ReadError / RemoteProtocolError / ReadTimeout ("may have arrived").
The body is read inside the transport, so a failure while reading it maps the same way.
(httpx-aiohttp, which does the same job, maps every aiohttp connection error, a server that
disconnects after the request was sent included, to ConnectTimeout: a lost create would be re-sent.)
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from typing import Any

import aiohttp
import httpx
from yarl import URL

_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")


def environment_names_a_proxy(environ: Mapping[str, str] | None = None) -> bool:
    """True when HTTP(S)_PROXY or ALL_PROXY is set (any case): then httpx's own transport is used."""
    names = {name.lower() for name, value in (os.environ if environ is None else environ).items() if value}
    return any(name in names for name in _PROXY_VARIABLES)


class AiohttpTransport(httpx.AsyncBaseTransport):
    """Sends httpx requests through one aiohttp session (created on first use, in the running loop)."""

    def __init__(self, *, verify: ssl.SSLContext | bool = True, trust_env: bool = True, limits: httpx.Limits):
        self._verify = verify
        self._trust_env = trust_env
        self._ssl: ssl.SSLContext | None = verify if isinstance(verify, ssl.SSLContext) else None
        self._limits = limits
        self._session: aiohttp.ClientSession | None = None

    def _ssl_context(self) -> ssl.SSLContext:
        """The same trust store httpx would use (certifi, SSL_CERT_FILE when trust_env, or ca_bundle);
        made for the first https request (loading it takes a noticeable moment, for nothing on plain http)."""
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context(verify=self._verify, trust_env=self._trust_env)
        return self._ssl

    def _open(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            limit=self._limits.max_connections or 0,
            keepalive_timeout=self._limits.keepalive_expiry if self._limits.keepalive_expiry is not None else 5.0,
        )
        # No cookies (httpx's client keeps none we rely on), no default headers: httpx sends its own.
        return aiohttp.ClientSession(
            connector=connector, cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=False
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._session is None:
            self._session = self._open()
        url = str(request.url)
        answered = False
        try:
            async with self._session.request(
                request.method,
                URL(url, encoded=True),
                headers=request.headers.multi_items(),
                data=request.content or None,  # requests built with json= / data= / content= are read already
                allow_redirects=False,
                timeout=_timeout_of(request.extensions.get("timeout", {})),
                ssl=self._ssl_context() if url.startswith("https:") else True,
            ) as answer:
                answered = True
                content = await answer.read()
                status, headers, reason = answer.status, answer.raw_headers, answer.reason
        except (TimeoutError, aiohttp.ClientError, OSError) as error:
            raise _httpx_error(error, request, answered) from error
        extensions: dict[str, Any] = {"http_version": b"HTTP/1.1"}
        if reason:
            extensions["reason_phrase"] = reason.encode("latin-1", "replace")
        return httpx.Response(status, headers=list(headers), content=content, request=request, extensions=extensions)

    async def aclose(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()


def _timeout_of(timeout: Mapping[str, object]) -> aiohttp.ClientTimeout:
    """aiohttp's timeouts for httpx's (a request's `timeout` extension: connect, pool, read)."""
    connect = _seconds(timeout.get("connect"))
    pool = _seconds(timeout.get("pool"))
    return aiohttp.ClientTimeout(
        total=None,
        connect=None if pool is None or connect is None else pool + connect,
        sock_connect=connect,
        sock_read=_seconds(timeout.get("read")),
    )


def _seconds(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _httpx_error(error: BaseException, request: httpx.Request, answered: bool) -> httpx.TransportError:
    """The httpx error an aiohttp failure stands for (see the module docstring)."""
    message = f"{type(error).__name__}: {error}"
    if not answered and isinstance(error, aiohttp.ClientConnectorError):
        return httpx.ConnectError(message, request=request)  # refused, DNS, TLS: nothing was sent
    if not answered and isinstance(error, aiohttp.ConnectionTimeoutError):
        return httpx.ConnectTimeout(message, request=request)
    if isinstance(error, TimeoutError):
        return httpx.ReadTimeout(message, request=request)
    if isinstance(error, aiohttp.ServerDisconnectedError):
        return httpx.RemoteProtocolError(message, request=request)
    if isinstance(error, aiohttp.InvalidURL):
        return httpx.UnsupportedProtocol(message, request=request)
    return httpx.ReadError(message, request=request)
