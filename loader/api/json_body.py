"""JSON response bodies, decoded with orjson first and the standard parser for what orjson refuses.

Decoding the list pages is the largest share of a plan's fetching CPU, and orjson decodes a page
in about half the time the standard parser takes (docs/performance.md). It refuses some text the
standard parser takes (NaN and Infinity, lone surrogates, UTF-16 and UTF-32) and reads integers
beyond 64 bits as floats; such text (any run of 19 digits or more sends a body the old way) is
decoded as before, so every body reads as it did.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_DIGITS_ONLY = bytes(b"0"[0] if b"0"[0] <= byte <= b"9"[0] else b" "[0] for byte in range(256))
_LONG_NUMBER = b"0" * 19


def decoded(content: bytes) -> Any:
    """The JSON value of `content`; raises ValueError (as json.loads does) when it is not JSON."""
    if _LONG_NUMBER in content.translate(_DIGITS_ONLY):  # a run of 19 digits: beyond what orjson reads exactly
        return json.loads(content)
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return json.loads(content)
