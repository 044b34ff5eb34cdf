"""JSON and JSON Lines -> rows of cell values: from a file, a folder or glob, or an http(s) URL.

Where the records are (`records:`) is a JSONPath (RFC 9535), evaluated by python-jsonpath.
JSONPath is the path language people already meet around JSON APIs (`$.items[*]`; kubectl's
`-o jsonpath`, API testing tools), now an IETF standard; python-jsonpath follows the RFC, is typed
and maintained, where jsonpath-ng implements an older, looser dialect of its own. Without
`records:` a document that is a list gives one record per item and an object is one record; in
JSON Lines (`.jsonl`, `.ndjson`) each line is a record (or holds them at `records:`). A
`records:` path that finds no record because it names a key no document has is an error; one
that reaches an empty list reads no record (`records_found`).

A mapping's column is a path from the record: a dotted path with indexes (`provider.name`,
`offerings[0].code`; a step into a list goes into each item, so `offerings.code` finds every
offering's code), or a JSONPath from the record (`$.offerings[?@.primary].code`). `null` finds
nothing. Values follow the cell rules: text as it is (empty text is empty), whole numbers as
`int` (`10.0` too), other numbers as `float`, booleans as they are; an object is refused at the
record (name a value inside it) and a list gives its items.

A URL is read page by page, by the `WalkPages` the caller gives (`loader.api.feeds`): the next
page is a link in the body (`next: "$.links.next"`), a header (`next: {header: Link}`, the
`rel="next"` link), or the next page number (`page: {param: pageNumber, more: "$.hasNextPage"}`,
as OOAPI v5 pages). `total:` is a
path to the number of records the feed says it holds, checked against the records read.

Text must be UTF-8 (a byte order mark is dropped); a file or page larger than
`LOADER_MAX_JSON_BYTES` is refused before it is parsed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonpath
import orjson

from loader.errors import SheetError
from loader.files.inputs import NotUtf8, decode_utf8
from loader.places import PLACE_SEPARATOR
from loader.source.readers.limits import Limit
from loader.source.readers.record_rows import (
    FieldPaths,
    Page,
    RecordRows,
    RowsBuilder,
    WalkPages,
    is_url,
    matched_files,
    offline,
    with_param,
)
from loader.source.readers.records_found import RecordsFound, json_missing
from loader.source.readers.rows import CellValue
from loader.url_text import shown_url

SUFFIXES = frozenset({".json", ".jsonl", ".ndjson"})
LINES_SUFFIXES = frozenset({".jsonl", ".ndjson"})
JSON_BYTES = Limit("LOADER_MAX_JSON_BYTES", 1024 * 1024 * 1024, "bytes in a JSON file or page")
_BOM = b"\xef\xbb\xbf"
_STEP = re.compile(r"\.?([^.\[\]]+)|\[(\d+|\*)\]")
_KEY = re.compile(r"[^.\[\]$]+")  # a path that is one key: provider, unit_code
_DOTTED = re.compile(r"(?:\.?[^.\[\]]+|\[(?:\d+|\*)\])+")


@dataclass(frozen=True)
class Paging:
    """How a URL feed names its next page; all None: one page."""

    next_path: str | None = None  # next: "$.links.next"
    next_header: str | None = None  # next: {header: Link}
    page_param: str | None = None  # page: {param: pageNumber, more: "$.hasNextPage"}
    more_path: str | None = None
    first_page: int = 1


@dataclass(frozen=True)
class JsonSource:
    """A `json:` source as the mapping gives it."""

    name: str
    location: str  # a file, folder or glob (relative to `base`), or an http(s) URL
    base: Path  # the mapping file's folder
    records: str | None = None
    paging: Paging = Paging()
    walk: WalkPages | None = None  # how a URL is fetched (with its credentials); None: offline
    total: str | None = None
    lines: bool | None = None  # JSON Lines; None: told by the suffix (.jsonl, .ndjson)


def describe(source: JsonSource) -> str:
    """The source as messages name it, without credentials: `courses.json`, `catalogue (json, https://h/courses)`."""
    if is_url(source.location):
        return f"{source.name} (json, {shown_url(source.location)})"
    return source.location


def read(source: JsonSource, fields: list[FieldPaths]) -> RecordRows:
    """The records of the source, one row each (row 1 the fields' names). Raises SheetError naming
    the source and the record for anything that cannot be read as asked."""
    where = describe(source)
    records_path = _compiled(source.records, where) if source.records else None
    builder = RowsBuilder(where, fields)
    rows = _RowMaker(fields, records_path, builder)
    if is_url(source.location):
        said_total = _read_pages(source, where, rows.take)
        if said_total is not None and said_total != rows.count:
            raise SheetError(f"the feed says it holds {said_total:,} records ({source.total}) but {rows.count:,} "
                             "were read: it may have changed while its pages were read", where=where, hint="run again")
    else:
        files = matched_files(source.location, source.base, SUFFIXES, where)
        for path, display in files:
            prefix = f"{display}{PLACE_SEPARATOR}" if len(files) > 1 else ""
            lines = source.lines if source.lines is not None else path.suffix.lower() in LINES_SUFFIXES
            for document, at in _documents(path, lines, display):
                rows.take(document, prefix + at)
    rows.found.check(rows.count, source.records or "", where)
    return builder.done()


_AS_THEY_ARE = frozenset({str, int, float, bool, type(None)})


class _RowMaker:
    """Each record's row. Where every field is one key (`unit_code`), a record whose values are text,
    numbers, booleans or missing gives them looked up at once (whole floats as ints); any other record,
    and every record of other fields, is read field by field (`fast=False` reads every record so;
    tests/source/readers/test_json_feed.py holds both equal)."""

    def __init__(self, fields: list[FieldPaths], records_path: JsonPath | None, builder: RowsBuilder,
                 fast: bool = True):
        self.readers = [_field_reader(spec, builder.display) for spec in fields]
        self.records_path = records_path
        self.builder = builder
        one_key = all(len(spec.paths) == 1 and _KEY.fullmatch(spec.paths[0]) for spec in fields)
        self.keys = tuple(spec.paths[0] for spec in fields) if one_key and fast else None
        self.count = 0
        self.found = RecordsFound()  # whether `records:` names what the documents hold

    def take(self, document: Any, prefix: str) -> None:
        """The records of one document (the document itself, or those `records:` finds)."""
        keys, builder = self.keys, self.builder
        plain = self.records_path is None and type(document) is dict
        records = ((prefix + "$", document),) if plain else _records(document, self.records_path, prefix)
        before = self.count
        for location, record in records:
            self.count += 1
            if keys is not None and type(record) is dict:
                values = [record.get(key) for key in keys]
                types = set(map(type, values))
                if types <= _AS_THEY_ARE and "" not in values:
                    if float in types:
                        values = [int(v) if type(v) is float and v.is_integer() and abs(v) < 2**63 else v
                                  for v in values]
                    builder.add_row(location, tuple(values))
                    continue
            self.add(location, record)
        if self.count == before and self.records_path is not None:
            self._found_none(self.records_path, document)

    def _found_none(self, path: JsonPath, document: Any) -> None:
        """A document where `records:` found no record: why, noted (a name it lacks, or an empty list)."""
        self.found.note(lambda: json_missing(path, document))

    def add(self, location: str, record: Any) -> None:
        try:
            values = [reader(record) for reader in self.readers]
        except _ObjectFound as found:
            raise SheetError(f"the path {found.name!r} finds an object, not a value", where=self.builder.at(location),
                             hint="name a value inside it (e.g. name.en), or a list of values") from None
        self.builder.add(location, values)


def _documents(path: Path, lines: bool, display: str) -> Iterator[tuple[Any, str]]:
    """The file's document (JSON), or each line's (JSON Lines, read a line at a time), with its
    location prefix."""
    size = path.stat().st_size
    if size > JSON_BYTES.value():
        raise JSON_BYTES.refuse(f"the file holds {size:,} bytes", display)
    if not lines:
        yield _parsed(path.read_bytes(), display, 0), ""
        return
    with path.open("rb") as stream:
        for number, line in enumerate(stream, start=1):
            if number == 1 and line.startswith(_BOM):
                line = line[len(_BOM):]
            if not line.isspace() and line:
                try:
                    document = orjson.loads(line)
                except orjson.JSONDecodeError:
                    document = _parsed(line, display, number)  # raises, saying what is wrong where
                yield document, f"line {number}{PLACE_SEPARATOR}"


def _parsed(data: bytes, where: str, line: int) -> Any:
    """A JSON text (a whole document, or line `line` of JSON Lines) parsed; SheetError for text
    that is not UTF-8 or not JSON, naming the line and column."""
    try:
        return orjson.loads(data[len(_BOM):] if not line and data.startswith(_BOM) else data)
    except orjson.JSONDecodeError as exc:
        try:
            decode_utf8(data)
        except NotUtf8 as undecodable:
            said = str(undecodable) if not line else str(undecodable).replace("line 1,", f"line {line},", 1)
            raise SheetError(said, where=where, hint="JSON is UTF-8: save or serve it as UTF-8") from None
        at = f"line {line}: " if line else ""
        raise SheetError(f"not valid JSON: {at}{exc}", where=where, hint="check the file is JSON (or JSON Lines, "
                         "one record a line, named .jsonl)") from None


JsonPath = jsonpath.JSONPath | jsonpath.CompoundJSONPath


def _compiled(path: str, where: str) -> JsonPath:
    try:
        return jsonpath.compile(path)
    except jsonpath.JSONPathError as exc:
        raise SheetError(f"the path {path!r} is not a JSONPath: {exc}", where=where,
                         hint="e.g. records: \"$.items[*]\"") from None


def _records(document: Any, path: JsonPath | None, prefix: str) -> Iterator[tuple[str, Any]]:
    if path is not None:
        for match in path.finditer(document):
            yield prefix + _location(match.parts), match.obj
    elif isinstance(document, list):
        for index, item in enumerate(document):
            yield f"{prefix}$[{index}]", item
    else:
        yield f"{prefix}$", document


def _location(parts: tuple[Any, ...]) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


class _ObjectFound(Exception):
    """A field's path found an object where a value belongs (the reader names the record)."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


def _field_reader(spec: FieldPaths, where: str) -> Callable[[Any], list[CellValue]]:
    """A function giving a record's values for the field: those the first path that finds any finds."""
    finders = [_finder(path, where) for path in spec.paths]
    name = spec.name

    def read_field(record: Any) -> list[CellValue]:
        for finder in finders:
            found = [value for item in finder(record) for value in _values(item, name)]
            if found:
                return found
        return []

    if len(spec.paths) != 1 or not _KEY.fullmatch(spec.paths[0]):
        return read_field
    key = spec.paths[0]

    def read_key(record: Any) -> list[CellValue]:
        """`read_field` for one path that is one key: the value looked up, text and whole numbers
        given as they are without a walk (tests/source/readers/test_json_feed.py holds them equal)."""
        if type(record) is not dict:
            return read_field(record)
        value = record.get(key)
        kind = type(value)
        if kind is str:
            return [value] if value else []
        if kind is int or kind is bool:
            return [value]
        return _values(value, name)

    return read_key


def _finder(path: str, where: str) -> Callable[[Any], list[Any]]:
    if path.startswith("$"):
        compiled = _compiled(path, where)
        return lambda record: list(compiled.findall(record))
    if not _DOTTED.fullmatch(path) or path.startswith("."):
        raise SheetError(f"the path {path!r} is neither a dotted path nor a JSONPath", where=where,
                         hint="e.g. provider.name, offerings[0].code, or $.offerings[?@.primary].code")
    steps: list[tuple[str, str]] = _STEP.findall(path)
    return lambda record: _walk(record, steps)


def _walk(record: Any, steps: list[tuple[str, str]]) -> list[Any]:
    current = [record]
    for name, index in steps:
        following: list[Any] = []
        for item in current:
            if name:
                for one in item if isinstance(item, list) else [item]:
                    if isinstance(one, dict) and name in one:
                        following.append(one[name])
            elif isinstance(item, list):
                following.extend(item if index == "*" else item[int(index):int(index) + 1])
        current = following
    return current


def _values(found: Any, name: str) -> list[CellValue]:
    if found is None:
        return []
    if isinstance(found, list):
        return [value for item in found for value in _values(item, name)]
    if isinstance(found, dict):
        raise _ObjectFound(name)
    if isinstance(found, float) and found.is_integer() and abs(found) < 2**63:
        return [int(found)]
    if found == "":
        return []
    return [found]


def _read_pages(source: JsonSource, where: str, take: Callable[[Any, str], None]) -> int | None:
    """Read every page of a URL feed, handing each page's document to `take`; the total it says."""
    if source.walk is None:
        raise offline(where)
    paging = source.paging
    more = _compiled(paging.more_path, where) if paging.more_path else None
    following = _compiled(paging.next_path, where) if paging.next_path else None
    total_path = _compiled(source.total, where) if source.total else None
    first = source.location
    if paging.page_param:
        first = with_param(first, paging.page_param, paging.first_page)
    state: dict[str, Any] = {"page": 0, "total": None}

    def visit(page: Page) -> str | None:
        state["page"] += 1
        number = state["page"]
        if len(page.body) > JSON_BYTES.value():
            raise JSON_BYTES.refuse(f"page {number} holds {len(page.body):,} bytes", where)
        document = _parsed(page.body, f"{where}{PLACE_SEPARATOR}page {number}", 0)
        if number == 1 and total_path is not None:
            state["total"] = _total(total_path.findall(document), source.total or "", where)
        take(document, f"page {number}{PLACE_SEPARATOR}")
        return _next(page, document, paging, following, more, number)

    source.walk(first, visit, where)
    total: int | None = state["total"]
    return total


def _next(page: Page, document: Any, paging: Paging, following: Any, more: Any, number: int) -> str | None:
    if following is not None:
        link = next(iter(following.findall(document)), None)
        return link if isinstance(link, str) and link else None
    if paging.next_header:
        if paging.next_header.lower() == "link":
            return page.link_next
        return page.headers.get(paging.next_header) or None
    if paging.page_param and more is not None and next(iter(more.findall(document)), False) is True:
        return with_param(page.url, paging.page_param, paging.first_page + number)
    return None


def _total(found: list[Any], path: str, where: str) -> int:
    value = found[0] if found else None
    if not isinstance(value, int) or isinstance(value, bool):
        raise SheetError(f"the total path {path!r} finds {value!r} on the first page, not a whole number",
                         where=where, hint="point total: at the count of records the feed says it holds")
    return value


def record_paths(source: JsonSource, records: int = 50) -> tuple[str, ...]:
    """The paths to the values of the source's first `records` records, in the order first met
    (what `loader init --records` drafts a mapping from): dotted keys, a list's first item by
    index (`name[0].value`), so each path finds one value. A file, folder or glob only."""
    where = describe(source)
    if is_url(source.location):
        raise SheetError("a mapping is drafted from a file, not a URL", where=where,
                         hint="save a page of the feed to a file and draft from it")
    records_path = _compiled(source.records, where) if source.records else None
    found: dict[str, None] = {}
    seen = 0
    for path, display in matched_files(source.location, source.base, SUFFIXES, where):
        lines = source.lines if source.lines is not None else path.suffix.lower() in LINES_SUFFIXES
        for document, _ in _documents(path, lines, display):
            for _, record in _records(document, records_path, ""):
                found.update(dict.fromkeys(_leaf_paths(record, "")))
                seen += 1
                if seen >= records:
                    return tuple(found)
    return tuple(found)


def _leaf_paths(value: Any, path: str) -> Iterator[str]:
    """The paths below `value` (at `path`) that end at a value, not an object or list; a key
    that a dotted path cannot spell (holding `.`, `[`, `]` or `$`) is left out."""
    if isinstance(value, dict):
        for key, item in value.items():
            if _KEY.fullmatch(key):
                yield from _leaf_paths(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        if value and path:
            yield from _leaf_paths(value[0], f"{path}[0]")
    elif value is not None and path:
        yield path
