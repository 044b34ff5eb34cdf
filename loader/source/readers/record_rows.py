"""What the readers of non-tabular sources (JSON, XML) share: the columns a mapping asks of each
record, the rows they make, where each row's record is, and which files a source names.

A non-tabular source has no columns of its own; a mapping's column is a path from the record
(`FieldPaths`): the first of its paths that finds a value gives it, and a path that finds several
values is an error at the record unless the field collects them. A record whose collecting fields
found several values gives one row per value (the other fields repeated), so the mapping's
`collect: list` or `collect: join` gathers them again as it gathers the rows of one key.

The result is a `RecordRows`, a `SheetData` whose row 1 holds the fields' names and whose later
rows each carry the location of their record (`$.items[41]`, `/catalog/provider/course[12]`),
so a place can name the record rather than a row number the next read may change.

A source read from a URL is fetched by a `WalkPages` the caller gives (`loader.api.feeds.walk_pages`
with the source's credentials): this package never opens a connection itself, and without one
(`validate`, offline) a URL source is not read.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from loader.config import EnvRef
from loader.errors import SheetError
from loader.places import PLACE_SEPARATOR
from loader.source.readers.rows import CellValue, SheetData, SheetRow


class Page(Protocol):
    """One fetched page (`loader.api.feeds.FeedPage`)."""

    @property
    def url(self) -> str: ...
    @property
    def body(self) -> bytes: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def link_next(self) -> str | None: ...  # the page its `Link` header names next


# walk(first_url, visit, where) fetches first_url and every URL `visit` returns for a page, until
# it returns None; the number of pages. Raises SheetError naming `where` for a page it cannot fetch.
WalkPages = Callable[[str, Callable[[Page], "str | None"], str], int]


@dataclass(frozen=True)
class FeedAuth:
    """How a URL source is reached, as its mapping gives it: headers and OAuth2 client credentials,
    each secret named by the environment variable that holds it (read when the feed is fetched)."""

    headers: tuple[tuple[str, EnvRef], ...] = ()
    token_url: str | None = None
    client_id: str | EnvRef | None = None
    client_secret: EnvRef | None = None


# fetch(auth, where): the WalkPages that fetches a URL source with its credentials (given by a
# stage that may use the HTTP client: `loader.plan.feed_fetching`); raises a LoaderError naming
# `where` for a credential it cannot read.
FetchFeed = Callable[[FeedAuth, str], WalkPages]


def is_url(location: str) -> bool:
    return location.lower().startswith(("http://", "https://"))


def with_param(url: str, name: str, value: int) -> str:
    """`url` with its query parameter `name` set to `value` (other parameters kept, in order)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != name]
    return urlunsplit(parts._replace(query=urlencode([*query, (name, str(value))])))


def offline(where: str) -> SheetError:
    """The error for a URL source asked to be read where no fetching is given (offline commands)."""
    return SheetError("a URL source is not read offline", where=where,
                      hint="plan reads it; validate reads it with --read-sources")


@dataclass(frozen=True)
class FieldPaths:
    """A mapping's column of a non-tabular source: its name, the paths tried in order, whether it
    collects several values."""

    name: str
    paths: tuple[str, ...]
    collect: bool = False


@dataclass(frozen=True)
class RecordRows(SheetData):
    """Rows read from records: `locations[i]` is where the record of `rows[i + 1]` is."""

    locations: tuple[str, ...] = ()
    unfound: tuple[str, ...] = ()  # the fields whose paths found nothing in any record

    def location(self, row: int) -> str:
        """Where the record of 1-based row `row` (2 on) is: `$.items[41]`, `courses.json › $.items[41]`."""
        return self.locations[row - 2]


class RowsBuilder:
    """Collects each record's values into rows numbered 2, 3, ... with their locations."""

    def __init__(self, display: str, fields: Sequence[FieldPaths]):
        self.display = display
        self.fields = tuple(fields)
        self.rows: list[SheetRow] = [SheetRow(1, tuple(f.name for f in self.fields))]
        self.locations: list[str] = []

    def add_row(self, location: str, values: tuple[CellValue, ...]) -> None:
        """One record that gives one value (or none) for each field."""
        self.rows.append(SheetRow(len(self.rows) + 1, values))
        self.locations.append(location)

    def add(self, location: str, values: Sequence[list[CellValue]]) -> None:
        """One record: per field, the values its first path that found any found."""
        if max(map(len, values), default=0) <= 1:
            self.add_row(location, tuple([found[0] if found else None for found in values]))
            return
        depth = 1
        for spec, found in zip(self.fields, values, strict=True):
            if len(found) > 1:
                if not spec.collect:
                    raise SheetError(
                        f"the path {spec.name!r} finds {len(found)} values in this record", where=self.at(location),
                        hint="narrow the path with a predicate or an index, or collect them (collect: list)")
                depth = max(depth, len(found))
        for at in range(depth):
            row = tuple(found[at] if at < len(found) else None if spec.collect else (found[0] if found else None)
                        for spec, found in zip(self.fields, values, strict=True))
            self.rows.append(SheetRow(len(self.rows) + 1, row))
            self.locations.append(location)

    def at(self, location: str) -> str:
        """The place of a record, as messages name it."""
        return f"{self.display}{PLACE_SEPARATOR}{location}"

    def missing(self) -> list[str]:
        """The fields whose paths found nothing in any record (a finding at the mapping line)."""
        return [spec.name for index, spec in enumerate(self.fields)
                if all(row.values[index] is None for row in self.rows[1:])]

    def done(self) -> RecordRows:
        """The rows read (none is no error here: the plan tells whether it is one, `allow_empty:`)."""
        return RecordRows(self.display, None, tuple(self.rows), locations=tuple(self.locations),
                          unfound=tuple(self.missing()))


def matched_files(spec: str, base: Path, suffixes: frozenset[str], where: str) -> list[tuple[Path, str]]:
    """The files a source names, each with its display name: a file, a folder (its files with one
    of `suffixes`, sorted by name) or a glob pattern (sorted). Relative to `base`."""
    path = Path(spec).expanduser()
    path = path if path.is_absolute() else base / path
    if glob.has_magic(spec):
        found = sorted(Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file())
    elif path.is_dir():
        found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in suffixes)
    elif path.is_file():
        found = [path]
    else:
        raise SheetError(f"no file or folder at {spec}", where=where,
                         hint="a relative path is relative to the mapping file's folder")
    if not found:
        kinds = ", ".join(sorted(suffixes))
        raise SheetError(f"{spec} names no file ({kinds})", where=where, hint="check the path or pattern")
    return [(p, _display(p, base)) for p in found]


def _display(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()
