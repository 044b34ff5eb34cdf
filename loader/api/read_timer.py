"""aiohttp's read timeout (`sock_read`) kept with one timer per connection, moved only when it is due.

aiohttp re-arms the timer on every read: a request cancels one TimerHandle and makes another when
it is sent, again when its answer's bytes arrive, and cancels it when the answer is read: two
timers made and two cancelled a write, ~5 µs of the client's CPU (of ~200), and the event loop
then sifts the cancelled ones out of its heap. The timeout means the same here: it fires when no
byte has arrived for `sock_read` seconds while an answer is awaited. A read only moves the deadline
(a float); the connection's one timer, when it goes off before the deadline, is set again for it,
and when nothing is awaited any more it lets itself lapse.

It takes the place of aiohttp's `ResponseHandler` in the transport's connector, overriding the two
methods through which aiohttp starts, moves and stops that timer (`_reschedule_timeout`,
`_drop_timeout`). Should an aiohttp release lay the handler out otherwise, `lazy_read_timer`
leaves the connector as it is, and aiohttp's own timer does the work as before.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import aiohttp
from aiohttp.client_proto import ResponseHandler

_HOOKS = ("_reschedule_timeout", "_drop_timeout", "_on_read_timeout", "start_timeout")


class LazyReadTimer(ResponseHandler):
    """aiohttp's protocol with the read timeout kept as a deadline (see the module docstring)."""

    _deadline: float | None = None  # when the answer awaited times out; None: nothing awaited

    def _reschedule_timeout(self) -> None:
        timeout = self._read_timeout
        if not timeout:
            self._deadline = None
            return
        loop = self._loop
        deadline = self._deadline = loop.time() + timeout
        handle = self._read_timeout_handle
        if handle is None or handle.cancelled() or handle.when() > deadline:  # a shorter timeout than before
            if handle is not None:
                handle.cancel()
            self._read_timeout_handle = loop.call_at(deadline, self._due)

    def _drop_timeout(self) -> None:
        self._deadline = None

    def _due(self) -> None:
        deadline = self._deadline
        if deadline is None:  # nothing awaited: the timer lapses until the next request
            self._read_timeout_handle = None
        elif self._loop.time() >= deadline:
            self._read_timeout_handle = None
            self._deadline = None
            self._on_read_timeout()
        else:  # bytes came meanwhile: wait on until the deadline they moved
            self._read_timeout_handle = self._loop.call_at(deadline, self._due)

    def connection_lost(self, exc: BaseException | None) -> None:
        handle, self._read_timeout_handle = self._read_timeout_handle, None
        if handle is not None:
            handle.cancel()
        super().connection_lost(exc)


def lazy_read_timer(connector: aiohttp.TCPConnector) -> bool:
    """Make `connector`'s connections keep their read timeout with `LazyReadTimer`; whether it could
    (this aiohttp's handler and connector are laid out as the class expects)."""
    factory: Any = getattr(connector, "_factory", None)
    laid_out = (
        isinstance(factory, functools.partial)
        and factory.func is ResponseHandler
        and all(callable(getattr(ResponseHandler, name, None)) for name in _HOOKS)
    )
    if not laid_out:
        return False
    loop: asyncio.AbstractEventLoop = factory.keywords["loop"]
    connector._factory = functools.partial(LazyReadTimer, loop=loop)  # type: ignore[assignment]
    return True
