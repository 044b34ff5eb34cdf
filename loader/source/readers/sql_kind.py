"""The `sql:` kind: a mapping's query source, read by `sql.read` (contract section 4.2).

```yaml
sources:
  handbook:
    sql: "SELECT unit_code, title FROM units WHERE year = :year"
    url: {env: CURRICULUM_DB_URL}      # or a URL without a password: sqlite:///handbook.db
    params: {year: 2027}
```

It needs a database (and usually credentials), so `validate` reads it only with `--read-sources`;
its fingerprint is the digest of the values the mappings read, so row order and unmapped columns
do not change it. It is read in the planning process (a connection is no value to send a child).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loader.errors import MappingError
from loader.source.readers import sql
from loader.source.readers.entries import base_of, flag, pairs, text, text_or_env
from loader.source.readers.kinds import Source, SourceKind, Wanted, no_files, values_digest
from loader.source.readers.rows import SheetData

NAME = "sql"


def _from_mapping(name: str, entry: dict[str, Any], folder: Path) -> Source:
    query = text(name, entry, NAME, required=True)
    url = text_or_env(name, entry, "url", required=True)
    timeout = entry.get("timeout", sql.DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise MappingError(f"source {name!r}: timeout: must be a number of seconds above 0")
    params = pairs(name, entry, "params")
    if any(isinstance(value, list | dict) for _, value in params):
        raise MappingError(f"source {name!r}: params: each value must be one value (text, a number, a date)")
    options = {"url": url, "params": params, "allow_empty": flag(name, entry, "allow_empty"),
               "timeout": float(timeout), "base": str(folder)}
    return Source(NAME, str(query), tuple(sorted(options.items())), name=name)


def _query(source: Source) -> sql.SqlSource:
    return sql.SqlSource(source.name or NAME, source.location, source.option("url"), base_of(source),
                         dict(source.option("params", ())), source.option("timeout", sql.DEFAULT_TIMEOUT_S))


def _read(source: Source, display: str, sheet: str | None, wanted: Wanted) -> SheetData:
    return sql.read(_query(source), [column.name for column in wanted.columns])


def _described(source: Source) -> str:
    return sql.describe(_query(source))


KIND = SourceKind(
    NAME,
    _read,
    describe=_described,
    files=no_files,
    offline=False,
    in_child=False,
    fingerprint=values_digest,
    places="record",
    results="records",
    from_mapping=_from_mapping,
    options=frozenset({"url", "params", "allow_empty", "timeout"}),
)
