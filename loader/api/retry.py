"""Which failures are retried, and how long to wait: the retry policy in one place.

429s are first waited out by the client's pacer (loader.api.throttle), on a budget of their own;
what it lets through is `Throttled`, not retried here.

Reads (GET) and whole-field updates (PATCH) are idempotent: retried on 429, 500, 502, 503, 504,
timeouts and dropped connections. A create (POST) is retried only when nothing can have been
committed: a 429, or a connection that could not be made. After a POST was sent, a timeout, a
dropped connection or a 5xx raises OutcomeUnknown and is not retried here: the executor decides
(it looks the record up by its key). Waits are exponential with jitter (stamina), and a
`Retry-After` from the service replaces the computed wait, capped so a run stays bounded.
"""

from __future__ import annotations

from collections.abc import Callable
from email.utils import parsedate_to_datetime
from time import time

from loader.api.auth import TokenUnavailable
from loader.api.errors import NoAnswer, RateLimited, ServerError, Unreachable
from loader.api.throttle import Throttled

RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER_S = 60.0
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "PATCH", "DELETE"})


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date); None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - time()
        except (TypeError, ValueError, IndexError):
            return None
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


def retry_hook(method: str) -> Callable[[Exception], bool | float]:
    """A stamina hook: False (do not retry), True (computed backoff) or the seconds to wait."""
    idempotent = method.upper() in IDEMPOTENT_METHODS

    def hook(error: Exception) -> bool | float:
        if isinstance(error, Throttled):  # the pacer's own budget is spent (loader.api.throttle)
            return False
        if isinstance(error, RateLimited):
            return _honour(error.retry_after)
        if isinstance(error, Unreachable | TokenUnavailable):
            return True
        if not idempotent:
            return False
        if isinstance(error, ServerError) and error.status in RETRIED_STATUSES:
            return _honour(getattr(error, "retry_after", None))
        return isinstance(error, NoAnswer)

    return hook


def _honour(retry_after: float | None) -> bool | float:
    if retry_after is None:
        return True
    # A float return must stay truthy-distinct from "no retry": 0 s means "retry now".
    return min(max(retry_after, 0.001), MAX_RETRY_AFTER_S)
