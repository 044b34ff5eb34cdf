"""How the planner (and `validate --read-sources`, `init`) fetches a URL source: the JSON and XML
readers are given a `WalkPages` over `loader.api.feeds`, with the source's credentials read from
the environment only now, when the feed is fetched.

This lives at a stage that may use the HTTP client: `loader.source` reads files and never opens a
connection itself (its readers take the fetching as a value).
"""

from __future__ import annotations

from functools import partial

from loader.api.feeds import ClientCredentials, FeedAccess, walk_pages
from loader.config import EnvRef, Secret
from loader.source.readers.record_rows import FeedAuth, WalkPages


def fetch_feed(auth: FeedAuth, where: str) -> WalkPages:
    """The pages of a URL source, fetched with its headers and client credentials (each variable
    read now: an unset one is a ConfigError naming it and the source)."""
    headers = {name: Secret(env.read(f"the header {name}", where)) for name, env in auth.headers}
    credentials = None
    if auth.token_url is not None and auth.client_id is not None and auth.client_secret is not None:
        client_id = auth.client_id.read("the client id", where) if isinstance(auth.client_id, EnvRef) \
            else auth.client_id
        credentials = ClientCredentials(auth.token_url, client_id,
                                        Secret(auth.client_secret.read("the client secret", where)))
    walk: WalkPages = partial(walk_pages, access=FeedAccess(headers=headers, credentials=credentials))
    return walk
