"""XML -> rows of cell values: from a file, a folder or glob (one file a learner, say), or a URL.

Each element the `records:` path finds is a record (`xml_path`); each field's paths are
evaluated from it, the first that finds a value giving it. A `records:` path that finds no
element because it names one the document does not have is an error; one whose holder is there
and empty reads no record (`records_found`). An element's value is all the text
inside it with surrounding whitespace dropped (indentation is no value); an attribute's is its
text as written. Several values are an error at the record unless the field collects them.

The file is streamed (expat, a megabyte at a time, into the standard library's C elements): a
record is read when its end tag is, then let go of, so memory holds a record, its ancestors and
their earlier children (what `..` can reach: an ancestor's later children are not read yet),
never the whole feed. An element that held records is let go of when it closes.

Parsed with no DTD, no entities and no network, as defusedxml's `forbid_dtd` parses (whose
ElementTree builds pure-Python elements; this builds the standard library's C ones): a document
type declaration, an entity declaration or an external entity reference is refused when expat
meets it, which refuses entity expansion bombs and external entities alike. Bounded as workbooks
are: a file or page larger than `LOADER_MAX_XML_BYTES`, an element nested deeper than
`LOADER_MAX_XML_DEPTH` or a value longer than `LOADER_MAX_STRING_CHARS` is refused. The encoding
is the one the XML declaration names (UTF-8 without one).
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from xml.etree.ElementTree import Element, TreeBuilder
from xml.parsers import expat

from loader.errors import SheetError
from loader.places import PLACE_SEPARATOR
from loader.source.readers import limits
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
)
from loader.source.readers.records_found import RecordsFound, xml_missing
from loader.source.readers.rows import CellValue
from loader.source.readers.xml_path import (
    XML_NAMESPACE,
    Found,
    Step,
    evaluate,
    matches_stack,
    name_matches,
    parse_path,
    record_predicates_ok,
    text_of,
)
from loader.url_text import shown_url

SUFFIXES = frozenset({".xml"})
XML_BYTES = Limit("LOADER_MAX_XML_BYTES", 1024 * 1024 * 1024, "bytes in an XML file or page")
XML_DEPTH = Limit("LOADER_MAX_XML_DEPTH", 256, "levels of nesting in an XML file")
_CHUNK = 1024 * 1024
_XHTML = "{http://www.w3.org/1999/xhtml}"
_REFUSED_HINT = "the loader reads plain XML only: remove the <!DOCTYPE ...> declaration (or ask for a feed without it)"


@dataclass(frozen=True)
class XmlSource:
    """An `xml:` source as the mapping gives it."""

    name: str
    location: str  # a file, folder or glob (relative to `base`), or an http(s) URL
    base: Path
    records: str
    namespaces: Mapping[str, str] = field(default_factory=dict)
    walk: WalkPages | None = None  # how a URL is fetched (with its credentials); None: offline


def describe(source: XmlSource) -> str:
    """The source as messages name it, without credentials: `feeds/xcri.xml`, `feed (xml, https://h/x)`."""
    if is_url(source.location):
        return f"{source.name} (xml, {shown_url(source.location)})"
    return source.location


@dataclass(frozen=True)
class _Compiled:
    records: tuple[Step, ...]
    fields: tuple[tuple[tuple[Step, ...], ...], ...]
    prefixes: Mapping[str, str]  # namespace URI -> the mapping's prefix for it, for locations
    max_chars: int  # limits.STRING_CHARS, read once


def read(source: XmlSource, fields: list[FieldPaths]) -> RecordRows:
    """The records of the source, one row each (row 1 the fields' names). Raises SheetError naming
    the source (and the record) for anything that cannot be read as asked."""
    where = describe(source)
    records = parse_path(source.records, source.namespaces, where)
    record_predicates_ok(records, source.records, where)
    paths = tuple(tuple(parse_path(p, source.namespaces, where) for p in spec.paths) for spec in fields)
    prefixes = {uri: prefix for prefix, uri in source.namespaces.items()}
    compiled = _Compiled(records, paths, prefixes, limits.STRING_CHARS.value())
    builder = RowsBuilder(where, fields)

    found = RecordsFound()  # whether `records:` names what the documents hold

    def add(document: _Document, record: Element, location: str) -> None:
        builder.add(location, _values(record, document.walk, compiled, document.bound, lambda: builder.at(location)))

    def stream(data: IO[bytes], display: str, prefix: str) -> None:
        document = _stream(data, display, prefix, compiled, add)
        if not document.records:  # nothing was let go: the whole document is there to tell why
            found.note(lambda: xml_missing(records, document.tree.close(), document.bound,
                                           lambda tag: _short(tag, compiled.prefixes)))

    if is_url(source.location):
        stream(io.BytesIO(_fetch(source, where)), where, "")
    else:
        files = matched_files(source.location, source.base, SUFFIXES, where)
        for path, display in files:
            size = path.stat().st_size
            if size > XML_BYTES.value():
                raise XML_BYTES.refuse(f"the file holds {size:,} bytes", display)
            with path.open("rb") as data:
                stream(data, display, f"{display}{PLACE_SEPARATOR}" if len(files) > 1 else "")
    found.check(len(builder.locations), source.records, where)
    return builder.done()


def _fetch(source: XmlSource, where: str) -> bytes:
    if source.walk is None:
        raise offline(where)
    pages: list[bytes] = []

    def visit(page: Page) -> None:
        if len(page.body) > XML_BYTES.value():
            raise XML_BYTES.refuse(f"the answer holds {len(page.body):,} bytes", where)
        pages.append(page.body)

    source.walk(source.location, visit, where)
    return pages[0]


class _Walk:
    """The open elements while streaming: each with its position among same-named siblings."""

    def __init__(self) -> None:
        self.stack: list[Element] = []
        self.positions: list[int] = []
        self.counts: list[dict[str, int]] = [{}]
        self.held: list[bool] = []  # whether the open element has held a record

    def open(self, element: Element) -> None:
        counts = self.counts[-1]
        position = counts[element.tag] = counts.get(element.tag, 0) + 1
        self.stack.append(element)
        self.positions.append(position)
        self.counts.append({})
        self.held.append(False)

    def close(self) -> None:
        self.stack.pop()
        self.positions.pop()
        self.counts.pop()
        self.held.pop()

    def location(self, prefixes: Mapping[str, str]) -> str:
        last = len(self.stack) - 1
        return "".join(f"/{_short(e.tag, prefixes)}" + (f"[{p}]" if p > 1 or i == last else "")
                       for i, (e, p) in enumerate(zip(self.stack, self.positions, strict=True)))

    def parent_of(self, record: Element) -> Callable[[Element], Element | None]:
        """The parent of an element of `record` or of its ancestors (found once, when a path asks)."""
        parents: dict[Element, Element] = {}

        def parent(element: Element) -> Element | None:
            if not parents:
                parents.update((child, parent) for parent in record.iter() for child in parent)
                parents.update(zip(self.stack[1:], self.stack, strict=False))
            return parents.get(element)

        return parent


OnRecord = Callable[["_Document", Element, str], None]  # the document, a record, its location


class _Refused(Exception):
    """A document type or entity declaration met while parsing (turned into a SheetError)."""


class _Document:
    """One document streamed through expat into elements (the standard library's C TreeBuilder):
    its handlers open and close elements, read each record when it closes, and refuse a DTD."""

    def __init__(self, display: str, prefix: str, compiled: _Compiled, on_record: OnRecord):
        self.display, self.prefix, self.compiled, self.on_record = display, prefix, compiled, on_record
        self.walk = _Walk()
        self.tree = TreeBuilder()
        self.depth_limit = XML_DEPTH.value()
        self.last_name = compiled.records[-1].name if compiled.records else None
        self.record: Element | None = None
        self.records = 0  # records read
        self.bound: dict[str, str] = {}  # the document's prefixes (the last binding of each)
        self.names: dict[str, str] = {}  # expat's "uri local" -> "{uri}local"

    def parser(self) -> Any:
        parser: Any = expat.ParserCreate(namespace_separator=" ")  # Any: handlers of our own signatures
        parser.buffer_text = True
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.StartDoctypeDeclHandler = _refuse
        parser.EntityDeclHandler = _refuse
        parser.ExternalEntityRefHandler = _refuse
        parser.StartNamespaceDeclHandler = self._bind
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self.tree.data
        return parser

    def _bind(self, prefix: str | None, uri: str) -> None:
        self.bound[prefix or ""] = uri

    def _name(self, raw: str) -> str:
        name = self.names.get(raw)
        if name is None:
            uri, space, local = raw.rpartition(" ")
            name = self.names[raw] = f"{{{uri}}}{local}" if space else raw
        return name

    def _start(self, raw: str, attributes: dict[str, str]) -> None:
        walk = self.walk
        if len(walk.stack) >= self.depth_limit:
            raise XML_DEPTH.refuse(f"an element is nested more than {self.depth_limit} levels deep", self.display)
        if attributes:
            attributes = {self._name(key): value for key, value in attributes.items()}
        element = self.tree.start(self._name(raw), attributes)
        walk.open(element)
        if self.record is None and name_matches(self.last_name, element.tag) and matches_stack(
                self.compiled.records, walk.stack, walk.positions, self.bound):
            self.record = element

    def _end(self, raw: str) -> None:
        walk = self.walk
        element = self.tree.end(self._name(raw))
        if element is self.record:
            self.on_record(self, element, self.prefix + walk.location(self.compiled.prefixes))
            self.records += 1
            self.record = None
            walk.held[:-1] = [True] * (len(walk.held) - 1)
            _let_go(walk)
        elif self.record is None and walk.held[-1]:
            _let_go(walk)
        walk.close()


def _stream(stream: IO[bytes], display: str, prefix: str, compiled: _Compiled, on_record: OnRecord) -> _Document:
    """Read the records of one document, each given to `on_record` as it closes."""
    document = _Document(display, prefix, compiled, on_record)
    _parse(document.parser(), stream, display)
    return document


def _refuse(*_: object) -> None:
    raise _Refused


def _parse(parser: Any, stream: IO[bytes], display: str) -> None:
    """Feed the stream to the parser a chunk at a time; SheetError for XML that is not
    well-formed or declares a DTD or entities."""
    try:
        while chunk := stream.read(_CHUNK):
            parser.Parse(chunk, False)
        parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise SheetError(f"not well-formed XML: line {exc.lineno}, column {exc.offset + 1}: "
                         f"{expat.ErrorString(exc.code)}", where=display,
                         hint="check the file is XML, in the encoding its declaration names (UTF-8 without one)") \
            from None
    except _Refused:
        raise SheetError("the XML declares a document type (DTD) or entities, which the loader refuses: they can "
                         "expand without bound or read other files", where=display, hint=_REFUSED_HINT) from None


def _let_go(walk: _Walk) -> None:
    """Drop the element closing now (the top of the stack) from its parent, and its content."""
    element = walk.stack[-1]
    if len(walk.stack) > 1:
        walk.stack[-2].remove(element)
    element.clear()


def _values(record: Element, walk: _Walk, compiled: _Compiled, bound: Mapping[str, str],
            at: Callable[[], str]) -> list[list[CellValue]]:
    parent_of = walk.parent_of(record)
    values = []
    for paths in compiled.fields:
        found: list[CellValue] = []
        for steps in paths:
            found = [v for item in evaluate(steps, record, parent_of, bound)
                     if (v := _value(item, compiled.max_chars, at)) is not None]
            if found:
                break
        values.append(found)
    return values


def _value(found: Found, max_chars: int, at: Callable[[], str]) -> str | None:
    text = found if isinstance(found, str) else text_of(found)
    if len(text) > max_chars:
        raise limits.STRING_CHARS.refuse(f"a value holds {len(text):,} characters", at())
    return text if text.strip() else None


def _short(tag: str, prefixes: Mapping[str, str]) -> str:
    if tag.startswith("{"):
        uri, local = tag[1:].split("}", 1)
        prefix = prefixes.get(uri)
        return f"{prefix}:{local}" if prefix else local
    return tag





class _Enough(Exception):
    """Enough records read to list their paths."""


def document_namespaces(path: Path, display: str) -> dict[str, str]:
    """The prefixes an XML file binds (the first binding of each), for drafting a mapping: the
    default namespace gets the prefix `x` (`x1`, ... when the document binds `x` itself), since
    a path names a namespaced element by a prefix."""
    bound: dict[str, str] = {}
    parser: Any = expat.ParserCreate(namespace_separator=" ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartNamespaceDeclHandler = lambda prefix, uri: bound.setdefault(prefix or "", uri)
    parser.StartDoctypeDeclHandler = parser.EntityDeclHandler = parser.ExternalEntityRefHandler = _refuse
    with path.open("rb") as stream:
        _parse(parser, stream, display)
    default = bound.pop("", None)
    if default is not None:
        prefix = next(p for n in range(len(bound) + 1) if (p := f"x{n or ''}") not in bound)
        bound[prefix] = default
    return bound


def record_paths(source: XmlSource, records: int = 50) -> tuple[str, ...]:
    """The paths to the values of the source's first `records` records, in the order first met
    (what `loader init --records` drafts a mapping from): each element that holds text and each
    attribute; a step whose element repeats among its siblings in any record read gets a position
    (`dc:identifier[2]`, `x:presentation[1]/mlo:start`), so each path finds one value; XHTML inside
    an element is its text. Names are spelled with the source's `namespaces:`. A file, folder or glob."""
    where = describe(source)
    if is_url(source.location):
        raise SheetError("a mapping is drafted from a file, not a URL", where=where,
                         hint="save the feed to a file and draft from it")
    steps = parse_path(source.records, source.namespaces, where)
    record_predicates_ok(steps, source.records, where)
    prefixes = {XML_NAMESPACE: "xml", **{uri: prefix for prefix, uri in source.namespaces.items()}}
    compiled = _Compiled(steps, (), prefixes, limits.STRING_CHARS.value())
    found: dict[tuple[tuple[str, int], ...], None] = {}  # each path: its steps, with their positions
    repeated: set[tuple[str, ...]] = set()  # the steps (without positions) of elements with same-named siblings
    seen: list[Element] = []

    def take(_: _Document, record: Element, __: str) -> None:
        found.update(dict.fromkeys(_element_paths(record, prefixes, (), repeated)))
        seen.append(record)
        if len(seen) >= records:
            raise _Enough

    try:
        for path, display in matched_files(source.location, source.base, SUFFIXES, where):
            with path.open("rb") as stream:
                _stream(stream, display, "", compiled, take)
    except _Enough:
        pass
    spelled = (_spelled(path, repeated) for path in found)
    return tuple(dict.fromkeys(spelled))


def _element_paths(element: Element, prefixes: Mapping[str, str], path: tuple[tuple[str, int], ...],
                   repeated: set[tuple[str, ...]]) -> Iterator[tuple[tuple[str, int], ...]]:
    """The paths below `element` (at `path`, steps and positions) to its attributes and to each
    element holding text (XHTML inside an element: the element), noting in `repeated` the steps
    of elements with same-named siblings."""
    for name in element.attrib:
        yield (*path, ("@" + _short(name, prefixes), 0))
    counts = Counter(child.tag for child in element if isinstance(child.tag, str))
    positions: Counter[str] = Counter()
    for child in element:
        if not isinstance(child.tag, str):
            continue
        positions[child.tag] += 1
        at = (*path, (_short(child.tag, prefixes), positions[child.tag]))
        if counts[child.tag] > 1:
            repeated.add(tuple(name for name, _ in at))
        rich = any(isinstance(c.tag, str) and c.tag.startswith(_XHTML) for c in child)
        if rich or (len(child) == 0 and (child.text or "").strip()):
            yield at
        if not rich:
            yield from _element_paths(child, prefixes, at, repeated)


def _spelled(path: tuple[tuple[str, int], ...], repeated: set[tuple[str, ...]]) -> str:
    names = [name for name, _ in path]
    return "/".join(name + (f"[{position}]" if tuple(names[:n + 1]) in repeated else "")
                    for n, (name, position) in enumerate(path))
