"""Response bodies decode exactly as the standard parser decodes them, orjson or not."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.api.json_body import decoded

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
