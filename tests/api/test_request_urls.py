"""Each request's URL is the one httpx makes of the base URL and the path: for a base URL with or
without a path of its own or a trailing slash, for the profile's fixed paths (parsed once) and any
other path (one httpx refuses, refused alike); a path that is an address is left for httpx (and
the token's origin check) as it is."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from hypothesis import given
from hypothesis import strategies as st

from loader.api.urls import RequestUrls, fill_path
from loader.profile import Profile, load_profile

BASES = ("http://127.0.0.1:8000", "http://127.0.0.1:8000/", "https://ids.example.edu/api/v2",
         "https://ids.example.edu/api/v2/")
PROFILE = load_profile()
segments = st.text(st.characters(codec="utf-8", exclude_characters="/?#{}"), min_size=1, max_size=12)


def _httpx(base: str, path: str) -> httpx.URL:
    return httpx.Client(base_url=base).build_request("GET", path).url


def _joined(make: Callable[[], httpx.URL | str]) -> httpx.URL | str:
    """The URL made, or "refused" where httpx refuses it (a control character in a path)."""
    try:
        return make()
    except httpx.InvalidURL:
        return "refused"


def test_the_profiles_paths_are_joined_as_httpx_joins_them(profile: Profile) -> None:
    for base in BASES:
        urls = RequestUrls(base, profile)
        for entity in profile.entities.values():
            paths = [entity.path, *([entity.create.path] if entity.create else [])]
            if entity.update is not None:
                paths.append(fill_path(entity.update.path, "3f1c2a7e-1b2c-4d5e-8f90-123456789abc"))
            for path in paths:
                assert urls.url(path) == _httpx(base, path), (base, path)


@given(st.sampled_from(BASES), st.lists(segments, min_size=1, max_size=4))
def test_any_path_is_joined_as_httpx_joins_it(base: str, parts: list[str]) -> None:
    path = "/" + "/".join(parts)
    urls = RequestUrls(base, PROFILE)
    assert _joined(lambda: urls.url(path)) == _joined(lambda: _httpx(base, path))


def test_a_path_that_is_an_address_is_left_as_it_is(profile: Profile) -> None:
    address = "http://elsewhere.example:9/steal/1"
    assert RequestUrls(BASES[0], profile).url(address) == address
