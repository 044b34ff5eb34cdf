"""A URL as messages show it: never its user name, password or query (which may hold a token)."""

from __future__ import annotations

from urllib.parse import urlsplit


def shown_url(url: str) -> str:
    """`url`'s scheme, host, port and path: `https://host:8443/courses`."""
    parts = urlsplit(str(url))
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a port that is not a number: shown as no port
        port = ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"
