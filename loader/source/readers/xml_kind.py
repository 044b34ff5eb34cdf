"""The `xml:` kind: XML from a file, a folder or glob (one file a learner, say), or an http(s) URL,
read by `xml_feed.read` (contract section 4.2).

```yaml
sources:
  feed:
    xml: ../feeds/xcri-cap.xml
    records: "//x:course"
    namespaces: {x: "http://xcri.org/profiles/1.2/catalog", dc: "http://purl.org/dc/elements/1.1/"}
```

A mapping's column is a path from each record element (`dc:title`, `@id`, `../dc:title`). A URL
is read only where the command fetches; a file anywhere. The fingerprint is the digest of the
values the mappings read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loader.errors import MappingError
from loader.source.readers import xml_feed
from loader.source.readers.entries import base_of, flag, pairs, text
from loader.source.readers.feed_kinds import AUTH_OPTIONS, feed_auth, feed_files, is_offline, walk_for
from loader.source.readers.kinds import Source, SourceKind, Wanted, values_digest
from loader.source.readers.rows import SheetData

NAME = "xml"


def _from_mapping(name: str, entry: dict[str, Any], folder: Path) -> Source:
    location = text(name, entry, NAME, required=True)
    namespaces = pairs(name, entry, "namespaces")
    if not all(isinstance(uri, str) for _, uri in namespaces):
        raise MappingError(f"source {name!r}: namespaces: must map each prefix to its URI (text)")
    options: dict[str, Any] = {"records": text(name, entry, "records", required=True), "namespaces": namespaces,
                               "allow_empty": flag(name, entry, "allow_empty"), "auth": feed_auth(name, entry),
                               "base": str(folder)}
    return Source(NAME, str(location), tuple(sorted((k, v) for k, v in options.items() if v is not None)), name=name)


def _read(source: Source, display: str, sheet: str | None, wanted: Wanted) -> SheetData:
    feed = xml_feed.XmlSource(
        source.name or NAME, source.location, base_of(source), source.option("records"),
        dict(source.option("namespaces", ())), walk_for(source, wanted.fetch, display))
    return xml_feed.read(feed, list(wanted.columns))


def _described(source: Source) -> str:
    return xml_feed.describe(xml_feed.XmlSource(source.name or NAME, source.location, base_of(source), ""))


KIND = SourceKind(
    NAME,
    _read,
    describe=_described,
    files=lambda source: feed_files(source, xml_feed.SUFFIXES),
    offline=is_offline,
    fingerprint=values_digest,
    places="record",
    results="records",
    from_mapping=_from_mapping,
    options=frozenset({"records", "namespaces", "allow_empty", *AUTH_OPTIONS}),
)
