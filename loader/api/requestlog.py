"""`-v` request logging: one line per HTTP request (`loader.redaction.configure_logging` hides secrets).

Lines look like `GET /institution/catalogue/subjects 200 12 ms attempt 1`. Only the method, the
path (never the query: it may carry filters with personal data or a page token), the status, the
time and the attempt are logged; never headers or bodies. The redaction filter still scrubs
anything that looks like a token or a secret, and every registered one, should a message ever
carry one (an exception text, a future debug line).
"""

from __future__ import annotations

import logging
from collections import Counter
from time import perf_counter

import httpx

from loader.api.auth import TOKEN_REQUEST
from loader.redaction import REDACTED, redact

__all__ = ["ATTEMPT", "HTTP_LOGGER", "REDACTED", "RequestObserver", "redact"]

HTTP_LOGGER = "loader.http"
ATTEMPT = "loader_attempt"  # request extension: which attempt of the retry loop sent it
STARTED = "loader_started"


class LibraryNoiseFilter(logging.Filter):
    """Drops httpx/httpcore records below WARNING unless `loader.http` logs at DEBUG (`-vv`).

    httpx logs every full URL at INFO, query included (filters may hold personal data); our own
    line already says what `-v` promises.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or logging.getLogger(HTTP_LOGGER).isEnabledFor(logging.DEBUG)


class RetryNoticeFilter(logging.Filter):
    """Replaces stamina's WARNING `stamina.retry_scheduled` by an INFO line of `loader.http`.

    A retry is routine, not a warning, and each attempt already has its own request line; at `-v`
    the notice says how long the client waits and why (the error's text, which holds no secret).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg != "stamina.retry_scheduled":
            return True
        logging.getLogger(HTTP_LOGGER).info(
            "  retry %s in %s s after %s",
            getattr(record, "stamina.retry_num", "?"),
            getattr(record, "stamina.wait_for", "?"),
            getattr(record, "stamina.caused_by", "an error"),
        )
        return False


def log_request(
    logger: logging.Logger, method: str, path: str, outcome: str, elapsed_s: float, attempt: int | None
) -> None:
    """One line per request; `outcome` is the status code or the name of the transport failure."""
    if not logger.isEnabledFor(logging.INFO):
        return
    suffix = f" attempt {attempt}" if attempt else ""
    logger.info("%s %s %s %d ms%s", method, path, outcome, round(elapsed_s * 1000), suffix)


class RequestObserver:
    """Counts and logs every request actually sent (token requests included), via httpx event hooks.

    The start time rides on the request's extensions; a request that fails in transport is logged
    by `on_failure` with the exception's name in place of a status.
    """

    def __init__(self, logger: logging.Logger):
        self.counts: Counter[str] = Counter()
        self._log = logger

    async def on_request(self, request: httpx.Request) -> None:
        self.counts["token" if request.extensions.get(TOKEN_REQUEST) else request.method] += 1
        request.extensions[STARTED] = perf_counter()

    async def on_response(self, response: httpx.Response) -> None:
        self._line(response.request, str(response.status_code))

    def on_failure(self, error: httpx.TransportError) -> None:
        try:
            request = error.request
        except RuntimeError:
            return
        self._line(request, type(error).__name__)

    def _line(self, request: httpx.Request, outcome: str) -> None:
        is_token = bool(request.extensions.get(TOKEN_REQUEST))
        attempt = None if is_token else request.extensions.get(ATTEMPT)
        elapsed = perf_counter() - request.extensions.get(STARTED, perf_counter())
        log_request(self._log, request.method, request.url.path, outcome, elapsed, attempt)
