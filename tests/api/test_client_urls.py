"""The page URL the client builds itself is the URL httpx would have built."""

from __future__ import annotations

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.api.urls import with_query

BASES = ("http://127.0.0.1:8080/institution", "https://service.example/api/v5/", "http://[::1]:9/")
PATH = "/catalogue/schools"


@settings(max_examples=200, deadline=None)
@given(
    base=st.sampled_from(BASES),
    params=st.dictionaries(st.text(min_size=1, max_size=12), st.text(max_size=200), max_size=3),
)
def test_with_query_gives_the_url_httpx_builds(base, params):
    http = _client(base)
    merged = http.build_request("GET", PATH).url
    expected = http.build_request("GET", PATH, params=params).url
    built = with_query(merged, params)
    assert built == expected
    assert str(built) == str(expected)
    assert built.raw_path == expected.raw_path
    assert built.params == expected.params
    assert merged == http.build_request("GET", PATH).url  # left as it was


def _client(base: str) -> httpx.AsyncClient:
    # A transport of its own and no environment: nothing to set up beyond what builds requests.
    return httpx.AsyncClient(base_url=base, transport=httpx.MockTransport(_never), trust_env=False)


def _never(request: httpx.Request) -> httpx.Response:
    raise AssertionError("no request is sent here")

