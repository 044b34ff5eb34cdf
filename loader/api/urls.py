"""The URLs the client sends: item paths filled with an id, query values, and a query added to a
collection's URL without httpx re-parsing it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

import httpx

# What an already quoted path can hold that httpx's parser leaves as it is (no dot segments, and
# no leading // that would make it a network-path reference).
_PLAIN_PATH = re.compile(r"(?!//)(?!.*/\.\.?(?:/|$))(?:/(?:[A-Za-z0-9\-._~:@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)+")
_PLAIN_SEGMENT = re.compile(r"(?:[A-Za-z0-9\-._~:@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")  # one segment of such a path
_UNQUOTED_SEGMENT = re.compile(r"[A-Za-z0-9\-._~:@!$&'()*+,;=]*")  # the same without escapes, matched faster
_DOT_SEGMENTS = frozenset({".", ".."})
_HEADS_KEPT = 256


class RequestUrls:
    """The URLs `http` would build for the client's requests, built with fewer parses."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self._http = http
        self._base = http.base_url
        self._collections: dict[str, httpx.URL] = {}  # paths merged with base_url once, by httpx
        self._base_text = _base_text(self._base)
        self._plain_heads: dict[str, bool] = {}  # per path up to its last '/', whether it is plain

    def text(self, path: str) -> str | None:
        """The text of the URL httpx builds for `path` (no query) on base_url, made without an
        httpx.URL; None where only httpx can tell (as `joined`). Its origin is base_url's."""
        if self._base_text is None:
            return None
        head, slash, last = path.rpartition("/")
        plain = self._plain_heads.get(head)
        if plain is None:
            # what the plain check of the whole path says of every segment but the last ("/" alone:
            # a path starting with "//", not a path on the base); the heads of a few templates
            plain = head == "" or (head != "/" and _PLAIN_PATH.fullmatch(head) is not None)
            if len(self._plain_heads) < _HEADS_KEPT:
                self._plain_heads[head] = plain
        if not plain or not slash or last in _DOT_SEGMENTS:
            return None
        if not _UNQUOTED_SEGMENT.fullmatch(last) and not ("%" in last and _PLAIN_SEGMENT.fullmatch(last)):
            return None
        return self._base_text + path[1:]

    def url(self, path: str, params: Mapping[str, str] | None) -> httpx.URL | str:
        """The URL for `path` (with `params`); `path` itself where only httpx can tell (`joined`)."""
        if params is None:
            return joined(self._base, path) or path
        merged = self._collections.get(path)
        if merged is None:
            merged = self._collections[path] = self._http.build_request("GET", path).url
        if merged.query:  # a path with a query of its own: httpx's way, whatever it makes of both
            return self._http.build_request("GET", path, params=params).url
        return with_query(merged, params)


def with_query(url: httpx.URL, params: Mapping[str, str]) -> httpx.URL:
    """`url` (without a query) with `params` as its query: the URL httpx builds, parsed less.

    A page token makes the URL long and httpx checks and re-quotes every character at each parse
    (four a request through `build_request(path, params=...)`: ~0.2 ms a page). The query is encoded
    as httpx encodes it (urllib's urlencode), which leaves nothing for httpx's parser to re-quote, so
    it replaces the empty query of the parsed URL directly; should httpx lay its URL out otherwise,
    httpx adds the query itself.
    """
    if not params:
        return url
    reference = getattr(url, "_uri_reference", None)
    if not isinstance(reference, tuple) or "query" not in getattr(reference, "_fields", ()):
        return url.copy_merge_params(dict(params))
    fast = httpx.URL(url)
    fast._uri_reference = reference._replace(query=urlencode(params))  # type: ignore[attr-defined]
    return fast


def joined(base: httpx.URL, path: str) -> httpx.URL | None:
    """The URL httpx builds for `path` on a client whose base_url is `base`, or None where only httpx
    can tell (a path to quote, a base with a query, another layout of httpx's URL).

    httpx parses a relative path twice per request to merge it with base_url (~0.1 ms, on every
    write); a plain path (an item path filled by `fill_path`, whose id is quoted) needs no quoting,
    so it is appended to the base's parsed path directly, as httpx appends it.
    """
    reference = getattr(base, "_uri_reference", None)
    if (
        not isinstance(reference, tuple)
        or "path" not in getattr(reference, "_fields", ())
        or reference.query is not None  # type: ignore[attr-defined]
        or not _PLAIN_PATH.fullmatch(path)
    ):
        return None
    url = httpx.URL(base)
    url._uri_reference = reference._replace(path=(reference.path or "/") + path.lstrip("/"))  # type: ignore[attr-defined]
    return url


def _base_text(base: httpx.URL) -> str | None:
    """The text `joined` URLs start with (up to the base's path and its '/'), when a plain path's URL
    is that text followed by the path without its '/': read off a probe, so that any other layout
    of httpx's URL leaves the URLs to `joined` and httpx."""
    probe = joined(base, "/probe/x")
    text = "" if probe is None else str(probe)
    if not text.endswith("/probe/x"):
        return None
    return text[: -len("probe/x")]


def fill_path(template: str, ident: str) -> str:
    """An item path (`/subjects/{id}`) with the record's id or code, quoted."""
    return template.replace("{id}", quote(str(ident), safe=""))


def query_value(value: Any) -> str:
    """A filter's value as a query parameter: booleans as the service spells them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
