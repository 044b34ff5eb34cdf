"""Secrets and tokens never reach an output: one registry of known values, one `redact`.

Every secret the loader reads (`config.Secret`) and every token it is issued registers itself
here; the output boundaries (the CLI's error printer, the crash log, the logging handler) pass
their text through `redact`, whatever the text's origin: an exception raised by a library, a
service or proxy echoing the request, a log line. Values that merely look like a token or a
secret (`Bearer …`, `client_secret=…`) are scrubbed too, registered or not.

`configure_logging()` puts the same redaction on the loggers of the loader and of its HTTP
libraries, for any handler: the command line calls it, and so does a program using the loader
as a library before it lets those loggers' records out.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Iterable
from urllib.parse import quote, quote_plus

REDACTED = "***"
MIN_LENGTH = 4  # shorter values would turn ordinary text into asterisks

_PATTERNS = (
    re.compile(r"(?i)(bearer\s+)[^\s\"',;\\]+"),
    re.compile(
        r"(?i)((?:access_token|refresh_token|id_token|client_secret|password)[\"'\\]*\s*[:=]\s*[\"'\\]*)"
        r"[^\s\"'&,;}\\]+"
    ),
    re.compile(r"(?i)(authorization[\"'\\]*\s*[:=]\s*[\"'\\]*)[^\"'\n\\]+"),
)

_lock = threading.Lock()
_known: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember `value` as a secret: from now on `redact` hides it wherever it appears, also in the
    spellings an echo gives it (form- or URL-encoded, JSON-escaped)."""
    if value and len(value) >= MIN_LENGTH:
        spellings = {value, quote_plus(value), quote(value, safe=""), json.dumps(value)[1:-1]}
        with _lock:
            _known.update(spellings)


def known_secrets() -> tuple[str, ...]:
    """The registered values, longest first (so a value containing another is hidden whole)."""
    with _lock:
        return tuple(sorted(_known, key=len, reverse=True))


def redact(text: str, extra: Iterable[str] = ()) -> str:
    """`text` with every registered secret, every value in `extra`, and token-like values hidden."""
    values = sorted({*known_secrets(), *(v for v in extra if v and len(v) >= MIN_LENGTH)}, key=len, reverse=True)
    for value in values:
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
    return text


class RedactionFilter(logging.Filter):
    """Rewrites each record's message through `redact`, with the values `known()` returns besides
    the registered ones; an exception it carries is kept only as its scrubbed summary."""

    def __init__(self, known: Callable[[], Iterable[str]] = tuple):
        super().__init__()
        self._known = known

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message, tuple(self._known()))
        if cleaned != message or record.args:
            record.msg = cleaned
            record.args = None
        if record.exc_info and record.exc_info[1] is not None:
            # Tracebacks are formatted later, outside our reach: keep only the scrubbed summary.
            error = record.exc_info[1]
            record.msg = f"{record.msg} ({type(error).__name__}: {redact(str(error), tuple(self._known()))})"
            record.exc_info = None
            record.exc_text = None
        return True


# A logger's filters see only the records logged on it by name, not its children's: each logger that
# logs requests, retries or errors is named. httpx logs full URLs, httpcore connection details,
# stamina the error a retry follows (which may quote an echoed request).
REDACTED_LOGGERS = ("loader", "loader.http", "loader.plan", "httpx", "httpcore", "stamina")
_FILTER = RedactionFilter()


def configure_logging() -> None:
    """Hide every registered secret and token (and whatever looks like one) in the records of the
    loggers that may carry them (`REDACTED_LOGGERS`), whichever handler writes them out.

    The command line calls it before each command; a program that uses the loader as a library
    and lets these loggers' records out (to a file, a log service) calls it once, first. It adds
    one filter to each of those loggers and changes nothing else: no handler, level or format.
    Calling it again changes nothing.
    """
    for name in REDACTED_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
