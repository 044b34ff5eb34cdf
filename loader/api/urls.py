"""The URLs the client sends: paths joined to the base URL, item paths filled with an id, and query
values."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from loader.profile import Profile


def fill_path(template: str, ident: str) -> str:
    """An item path (`/subjects/{id}`) with the record's id or code, quoted."""
    return template.replace("{id}", quote(str(ident), safe=""))


def query_value(value: Any) -> str:
    """A filter's value as a query parameter: booleans as the service spells them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class RequestUrls:
    """Each request's URL: its path joined to the base URL as httpx joins them (the base URL's path,
    a slash, the path without its leading one), handed to httpx as a URL. httpx parses a URL given as
    text on every request, and twice when it joins a path to its base URL; a URL is parsed here once,
    and the paths of the profile that name no record (its lists and creates) once for the client."""

    def __init__(self, base_url: str, profile: Profile) -> None:
        self._base = base_url.rstrip("/") + "/"
        entities = profile.entities.values()
        paths = {e.path for e in entities} | {e.create.path for e in entities if e.create is not None}
        self._fixed = {path: self._parsed(path) for path in paths if "{" not in path and "//" not in path}

    def url(self, path: str) -> httpx.URL | str:
        """The URL of `path`; a path that is an address stays as it is (httpx sends it, and the token's
        origin check refuses it)."""
        url = self._fixed.get(path)
        if url is not None:
            return url
        return path if "//" in path else self._parsed(path)

    def _parsed(self, path: str) -> httpx.URL:
        return httpx.URL(self._base + path.lstrip("/"))
