"""The one-byte guards of the plain-rows searches (`xlsx_blocks._holds`) answer as the searches do."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from loader.source.readers.xlsx_blocks import _GUARDS, _holds

_PIECES = st.sampled_from([b"<", b"!", b"?", b"'", b"e", b"<!", b"<?", b"'e'", b"<row r=\"1\">", b"Hello!", b"x"])


@given(block=st.lists(_PIECES, max_size=12).map(b"".join), needle=st.sampled_from([*_GUARDS, b"<f", b"&"]))
def test_a_guarded_search_answers_as_the_search(block: bytes, needle: bytes) -> None:
    assert _holds(block, needle) == (needle in block)
