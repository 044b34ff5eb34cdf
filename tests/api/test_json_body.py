"""Response bodies decode exactly as the standard parser decodes them, and request bodies encode to the
very bytes httpx's `json=` makes, orjson or not."""

from __future__ import annotations

import datetime
import enum
import json
import math
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.api.json_body import decoded, encoded

_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(value=_values, ascii_only=st.booleans())
def test_any_json_decodes_as_the_standard_parser_decodes_it(value: object, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")
    assert decoded(text) == json.loads(text)


@pytest.mark.parametrize("content", [
    b'{"n": NaN}', b'{"n": Infinity}', b'{"big": 123456789012345678901234567890}',
    b'[18446744073709551616, -9223372036854775809]',
    b'{"s": "\\ud800"}', '{"s": "é"}'.encode("utf-16"), b'{"a": 1, "a": 2}',
])
def test_what_orjson_refuses_is_decoded_by_the_standard_parser(content: bytes) -> None:
    ours, theirs = decoded(content), json.loads(content)
    assert type(ours) is type(theirs)
    if isinstance(theirs, dict) and isinstance(theirs.get("n"), float) and math.isnan(theirs["n"]):
        assert math.isnan(ours["n"])
    else:
        assert ours == theirs


@pytest.mark.parametrize("content", [b"", b"<html>", b'{"a": ', b"\xff\xfe\x00"])
def test_what_is_not_json_is_a_value_error(content: bytes) -> None:
    with pytest.raises(ValueError):
        decoded(content)


def _httpx_json(value: Any) -> bytes | type[BaseException]:
    """What httpx sends for `json=value` (its encoder's options), or the error it raises."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    except (ValueError, TypeError) as error:  # UnicodeEncodeError is a ValueError
        return type(error)


def _ours(value: Any) -> bytes | type[BaseException]:
    try:
        return encoded(value)
    except (ValueError, TypeError) as error:
        return type(error)


class _Text(enum.StrEnum):
    A = "a"


_bodies = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=2**63 - 2, max_value=2**64 + 2)
    | st.integers(max_value=-(2**63) + 2, min_value=-(2**63) - 2) | st.floats() | st.text()
    | st.sampled_from([_Text.A, datetime.date(2024, 1, 2), uuid.UUID(int=7), "\ud800", "\x7f\u2028"]),
    lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(st.text(max_size=6) | st.integers() | st.none(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=500, deadline=None)
@given(value=_bodies)
def test_a_request_body_is_encoded_as_httpx_encodes_json(value: Any) -> None:
    assert _ours(value) == _httpx_json(value)


def test_every_character_is_escaped_as_httpx_escapes_it() -> None:
    characters = [chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]
    for start in range(0, len(characters), 4096):
        text = "".join(characters[start:start + 4096])
        assert encoded({"k": text, "l": [text]}) == _httpx_json({"k": text, "l": [text]})
