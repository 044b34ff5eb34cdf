"""The page URL the client builds itself is the URL httpx would have built."""

from __future__ import annotations

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.api.urls import RequestUrls, fill_path, joined, with_query

BASES = ("http://127.0.0.1:8080/institution", "http://127.0.0.1:8080", "https://service.example/api/v5/", "http://[::1]:9/")
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



@settings(max_examples=300, deadline=None)
@given(
    base=st.sampled_from(BASES),
    template=st.sampled_from(("/catalogue/schools", "/catalogue/schools/{id}", "/a/{id}/status", "/x;v=1/{id}")),
    ident=st.text(max_size=40) | st.sampled_from((".", "..", "", "a.b", ".x")),
)
def test_joined_gives_the_url_httpx_builds_for_item_paths(base, template, ident):
    http = _client(base)
    path = fill_path(template, ident)
    expected = http.build_request("GET", path).url
    built = joined(http.base_url, path)
    if ident in (".", "..") and "{id}" in template:  # a dot segment: httpx drops it, joined leaves that to httpx
        assert built is None
        return
    assert built is not None  # any other filled item path is plain
    assert built == expected
    assert str(built) == str(expected)
    assert built.raw_path == expected.raw_path


@settings(max_examples=300, deadline=None)
@given(base=st.sampled_from(BASES), path=st.text(max_size=30).map(lambda text: "/" + text))
def test_joined_leaves_to_httpx_what_it_cannot_tell(base, path):
    http = _client(base)
    built = joined(http.base_url, path)
    if built is not None:
        assert str(built) == str(http.build_request("GET", path).url)


def test_joined_leaves_dot_segments_and_bad_escapes_to_httpx():
    base = _client(BASES[0]).base_url
    for path in ("/a/../b", "/a/./b", "/a/%zz", "/a b", "/a?b=1", "/a#b", "//host/a"):
        assert joined(base, path) is None
    query_base = _client("http://127.0.0.1:8080/x?k=v").base_url
    assert joined(query_base, "/a") is None


@settings(max_examples=400, deadline=None)
@given(
    base=st.sampled_from((*BASES, "http://127.0.0.1:8080/a%20b/", "https://service.example/api?x=1")),
    path=st.one_of(
        st.builds(fill_path, st.sampled_from(("/catalogue/schools", "/catalogue/schools/{id}", "/a/{id}/status",
                                              "/x;v=1/{id}", "//{id}", "/{id}", "{id}", "/a/./{id}")),
                  st.text(max_size=40) | st.sampled_from((".", "..", "", "a.b", ".x", "%41"))),
        st.text(alphabet="/.%abAB09-_~:@;=?#", max_size=20).map(lambda text: "/" + text),
        st.text(max_size=20),
    ),
)
def test_url_text_is_the_text_of_the_url_httpx_builds(base, path):
    http = _client(base)
    text = RequestUrls(http).text(path)
    built = joined(http.base_url, path)
    assert (text is None) == (built is None)  # where only httpx can tell, the text is left to httpx too
    if built is None:
        return
    assert text == str(built) == str(http.build_request("GET", path).url)
    assert httpx.URL(text) == http.build_request("GET", path).url
