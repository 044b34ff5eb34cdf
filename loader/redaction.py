"""Secrets and tokens never reach an output: one registry of known values, one `redact`.

Every secret the loader reads (`config.Secret`) and every token it is issued registers itself
here; the output boundaries (the CLI's error printer, the crash log, the logging handler) pass
their text through `redact`, whatever the text's origin: an exception raised by a library, a
service or proxy echoing the request, a log line. Values that merely look like a token or a
secret (`Bearer …`, `client_secret=…`) are scrubbed too, registered or not.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
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
