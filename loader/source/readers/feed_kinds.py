"""What the `json:` and `xml:` kinds share: where the records are, how a URL is reached, which
files a source names, and a mapping's columns as the paths read from each record.

A source's `headers:` and `auth: {client_credentials: ...}` become a `FeedAuth` whose secrets are
`{env: NAME}`, read only when the feed is fetched; the fetching itself is given by the command
(`Wanted.fetch`), so this package opens no connection. A file source is offline; a URL is not.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

from loader.errors import MappingError
from loader.source.readers.entries import base_of, env_ref, text, text_or_env
from loader.source.readers.kinds import Source
from loader.source.readers.record_rows import FeedAuth, FetchFeed, WalkPages, is_url, offline

AUTH_OPTIONS = frozenset({"auth", "headers"})


def feed_auth(name: str, entry: dict[str, Any]) -> FeedAuth | None:
    """The source's `headers:` and `auth:` (None: neither given)."""
    headers = entry.get("headers")
    auth = entry.get("auth")
    if headers is None and auth is None:
        return None
    if headers is not None and not isinstance(headers, dict):
        raise MappingError(f"source {name!r}: headers: must be a map of header -> {{env: NAME}}")
    given = tuple(sorted((str(k), env_ref(name, f"headers: {k}", v)) for k, v in (headers or {}).items()))
    if auth is None:
        return FeedAuth(given)
    credentials = auth.get("client_credentials") if isinstance(auth, dict) and set(auth) == {
        "client_credentials"} else None
    if not isinstance(credentials, dict):
        raise MappingError(f"source {name!r}: auth: must be {{client_credentials: {{token_url: ..., client_id: ..., "
                           "client_secret: {env: NAME}}}}")
    unknown = sorted(set(credentials) - {"token_url", "client_id", "client_secret"})
    if unknown:
        raise MappingError(f"source {name!r}: auth: client_credentials takes no {unknown[0]!r}",
                           hint="give token_url, client_id and client_secret")
    return FeedAuth(given, text(name, credentials, "token_url", required=True),
                    text_or_env(name, credentials, "client_id", required=True),
                    env_ref(name, "client_secret", credentials.get("client_secret")))


def is_offline(source: Source) -> bool:
    """A file source is read anywhere; a URL needs a network (and perhaps credentials)."""
    return not is_url(source.location)


def walk_for(source: Source, fetch: FetchFeed | None, where: str) -> WalkPages | None:
    """How the URL of `source` is fetched (None for a file); an error when the command fetches no URL."""
    if not is_url(source.location):
        return None
    if fetch is None:
        raise offline(where)
    walk: WalkPages = fetch(source.option("auth") or FeedAuth(), where)
    return walk


def feed_files(source: Source, suffixes: frozenset[str]) -> tuple[Path, ...]:
    """The files a file source names (its path alone when it names none, so a missing one is said)."""
    if is_url(source.location):
        return ()
    path = Path(source.location).expanduser()
    path = path if path.is_absolute() else base_of(source) / path
    if glob.has_magic(source.location):
        return tuple(sorted(Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file()))
    if path.is_dir():
        return tuple(sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in suffixes))
    return (path,)
