"""The URLs the client sends: item paths filled with an id, query values, and a query added to a
collection's URL without httpx re-parsing it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

import httpx


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


def fill_path(template: str, ident: str) -> str:
    """An item path (`/subjects/{id}`) with the record's id or code, quoted."""
    return template.replace("{id}", quote(str(ident), safe=""))


def query_value(value: Any) -> str:
    """A filter's value as a query parameter: booleans as the service spells them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
