"""The `json:` kind: JSON or JSON Lines from a file, a folder or glob, or an http(s) URL, read by
`json_feed.read` (contract section 4.2).

```yaml
sources:
  catalogue:
    json: https://ooapi.example.edu/courses     # or courses.json, exports/*.jsonl
    records: "$.items[*]"
    page: {param: pageNumber, more: "$.hasNextPage"}   # or next: "$.links.next", or next: {header: Link}
    headers: {Authorization: {env: CATALOGUE_TOKEN}}   # or auth: {client_credentials: {...}}
    total: "$.total"
```

A mapping's column is a path from each record. A URL is read only where the command fetches
(`plan`, `apply`, `validate --read-sources`); a file anywhere. The fingerprint is the digest of the
values the mappings read, so the order of the records and the values no mapping reads do not
change it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loader.errors import MappingError
from loader.source.readers import json_feed
from loader.source.readers.entries import base_of, flag, text
from loader.source.readers.feed_kinds import AUTH_OPTIONS, feed_auth, feed_files, is_offline, walk_for
from loader.source.readers.kinds import Source, SourceKind, Wanted, values_digest
from loader.source.readers.rows import SheetData

NAME = "json"


def _from_mapping(name: str, entry: dict[str, Any], folder: Path) -> Source:
    location = text(name, entry, NAME, required=True)
    options: dict[str, Any] = {"records": text(name, entry, "records"), "total": text(name, entry, "total"),
                               "allow_empty": flag(name, entry, "allow_empty"), "auth": feed_auth(name, entry),
                               "paging": _paging(name, entry), "base": str(folder)}
    return Source(NAME, str(location), tuple(sorted((k, v) for k, v in options.items() if v is not None)), name=name)


def _paging(name: str, entry: dict[str, Any]) -> json_feed.Paging | None:
    following, page = entry.get("next"), entry.get("page")
    if following is not None and page is not None:
        raise MappingError(f"source {name!r}: give next: or page:, not both")
    if isinstance(following, str) and following:
        return json_feed.Paging(next_path=following)
    if isinstance(following, dict) and set(following) == {"header"} and isinstance(following["header"], str):
        return json_feed.Paging(next_header=following["header"])
    if following is not None:
        raise MappingError(f"source {name!r}: next: must be a path (\"$.links.next\") or {{header: Link}}")
    if page is None:
        return None
    first = page.get("first", 1) if isinstance(page, dict) else None
    if (not isinstance(page, dict) or not set(page) <= {"param", "more", "first"} or not isinstance(
            page.get("param"), str) or not isinstance(page.get("more"), str) or not isinstance(first, int)):
        raise MappingError(f"source {name!r}: page: must be {{param: NAME, more: PATH}} (first: N optional)",
                           hint="e.g. page: {param: pageNumber, more: \"$.hasNextPage\"}")
    return json_feed.Paging(page_param=page["param"], more_path=page["more"], first_page=first)


def _read(source: Source, display: str, sheet: str | None, wanted: Wanted) -> SheetData:
    feed = json_feed.JsonSource(
        source.name or NAME, source.location, base_of(source), source.option("records"),
        source.option("paging") or json_feed.Paging(), walk_for(source, wanted.fetch, display),
        source.option("total"))
    return json_feed.read(feed, list(wanted.columns))


def _described(source: Source) -> str:
    return json_feed.describe(json_feed.JsonSource(source.name or NAME, source.location, base_of(source)))


KIND = SourceKind(
    NAME,
    _read,
    describe=_described,
    files=lambda source: feed_files(source, json_feed.SUFFIXES),
    offline=is_offline,
    fingerprint=values_digest,
    places="record",
    results="records",
    from_mapping=_from_mapping,
    options=frozenset({"records", "next", "page", "total", "allow_empty", *AUTH_OPTIONS}),
)
