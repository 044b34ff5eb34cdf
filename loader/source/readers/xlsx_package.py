"""An xlsx file as the format defines it: a zip package of parts found through relationships.

ECMA-376 Part 2 (packaging): `_rels/.rels` names the workbook part, each part's `_rels/<name>.rels`
names the parts it uses, by relationship type; part names are case-insensitive and relative to the
part that refers to them. Part 1 (SpreadsheetML) exists in two spellings, Transitional (what Excel
saves by default) and Strict ("Strict Open XML Spreadsheet"), which differ only in namespace URIs;
prefixes (`<x:sheet>`) are free. Nothing here assumes a part name such as `xl/workbook.xml`.

Defences: the file must be a regular file; an old binary `.xls` or an encrypted workbook (both are
OLE compound files) is named as such; a zip member must be stored or deflated, not encrypted; every
part read is bounded (`limits.PART_BYTES`) before it is inflated; XML with a DTD or entities is
refused (defusedxml), since no workbook needs one.
"""

from __future__ import annotations

import posixpath
import stat
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import unquote
from xml.etree.ElementTree import Element
from xml.parsers import expat

import defusedxml
from defusedxml import ElementTree

from loader.errors import SheetError
from loader.source.readers import limits, old_excel

MAIN_NAMESPACES = frozenset({
    "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "http://purl.oclc.org/ooxml/spreadsheetml/main",
})
_DOC_REL_NAMESPACES = (
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "http://purl.oclc.org/ooxml/officeDocument/relationships",
)
_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_CONTENT_TYPES = "{http://schemas.openxmlformats.org/package/2006/content-types}"
# Relationship types end with these names in both spellings (…/2006/relationships/worksheet and
# http://purl.oclc.org/ooxml/officeDocument/relationships/worksheet).
_KINDS = {"worksheet": "worksheet", "chartsheet": "chart sheet", "dialogsheet": "dialog sheet",
          "xlMacrosheet": "macro sheet", "xlIntlMacrosheet": "macro sheet"}
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_READ = 1 << 20
# What reading a damaged zip raises: bad headers, corrupt deflate data, a cut stream, an unknown
# zip version or an offset past the end of the file.
ZIP_FAULTS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError, ValueError)


@dataclass(frozen=True)
class SheetEntry:
    """A sheet as the workbook part lists it: name, visibility, kind and its part (if any)."""

    name: str
    state: str  # "visible", "hidden" or "veryHidden"
    kind: str  # "worksheet", "chart sheet", "dialog sheet", "macro sheet" or "unknown"
    part: str | None  # zip member name


@dataclass(frozen=True)
class Workbook:
    """The parts of one workbook that the sheet-XML pass needs."""

    sheets: tuple[SheetEntry, ...]
    styles: str | None
    shared_strings: str | None
    date1904: bool

    def sheet(self, name: str) -> SheetEntry | None:
        return next((s for s in self.sheets if s.name == name), None)


def check_regular_file(path: Path, display: str) -> None:
    """Refuse what is not a regular file (a device such as /dev/zero, a FIFO) before opening it."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise SheetError("source file not found", where=display) from None
    except OSError as exc:
        raise SheetError(f"cannot open the file: {exc.strerror}", where=display) from exc
    if not stat.S_ISREG(mode):
        kind = "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else "a device"
        raise SheetError(f"the source is {kind}, not a regular file", where=display,
                         hint="name a saved .xlsx, .xlsm or .csv file")


def check_container(path: Path, display: str) -> None:
    """Name the usual reasons an .xlsx is no zip: an old .xls, an encrypted workbook, anything else."""
    with path.open("rb") as stream:
        head = stream.read(8)
        if head == _OLE_MAGIC:
            directory = head + stream.read(4 << 20)
            if "EncryptedPackage".encode("utf-16-le") in directory:
                raise SheetError(
                    "the workbook is encrypted (protected with a password to open), so it cannot be read",
                    where=display,
                    hint="in Excel: File › Info › Protect Workbook › Encrypt with Password, clear the password, save",
                )
            raise SheetError(old_excel.MESSAGE, where=display, hint=old_excel.HINT)
        if not head.startswith(_ZIP_MAGIC):
            raise SheetError("the file is not an Excel workbook (.xlsx is a zip package; this is not one)",
                             where=display, hint="open it in Excel or LibreOffice and save it as .xlsx")


class Package:
    """An open xlsx zip: bounded reads of its parts by their (case-insensitive) names."""

    def __init__(self, archive: zipfile.ZipFile, display: str):
        self.archive = archive
        self.display = display
        # Part names compare case-insensitively, and a zip item name is the percent-encoded part name.
        self._names = {_folded(info.filename): info for info in archive.infolist()}
        # Two items one part name (differing only in case): which one a reader takes is its whim.
        self._twins: dict[str, list[str]] = {}
        if len(self._names) != len(archive.infolist()):
            for info in archive.infolist():
                self._twins.setdefault(_folded(info.filename), []).append(info.filename)

    def has(self, part: str) -> bool:
        return _folded(part) in self._names

    def open(self, part: str) -> IO[bytes]:
        """A stream of the inflated part, refused first if encrypted, oddly compressed or declared too large."""
        info = self._names.get(_folded(part))
        if info is None:
            raise SheetError(f"the workbook has no part {part!r} although another part refers to it",
                             where=self.display, hint="the file is damaged; open and save it in Excel")
        twins = self._twins.get(_folded(part), ())
        if len(twins) > 1:
            raise SheetError(
                f"the workbook holds {len(twins)} parts named {' and '.join(map(repr, twins))}, which differ only in "
                "case; part names are case-insensitive, so which one is the sheet cannot be told (programs read "
                "either, some an empty sheet)", where=self.display,
                hint="the file was re-zipped by another tool; open it in Excel or LibreOffice, check it, save it again")
        where = f"{self.display} › {info.filename}"
        if info.flag_bits & 0x1:
            raise SheetError("a part of the workbook is encrypted (zip encryption), so it cannot be read",
                             where=where, hint="save the workbook again in Excel without a password")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            method = {9: "Deflate64", 12: "bzip2", 14: "LZMA"}.get(info.compress_type, f"#{info.compress_type}")
            raise SheetError(
                f"a part of the workbook is compressed with {method}, which Excel never writes and the loader "
                "does not read", where=where,
                hint="the file was re-zipped by another tool; open and save it in Excel or LibreOffice",
            )
        if info.file_size > limits.PART_BYTES.value():
            raise limits.PART_BYTES.refuse(f"the part declares {info.file_size:,} bytes", where)
        try:
            return self.archive.open(info)
        except ZIP_FAULTS as exc:
            raise damaged(where, exc) from exc

    def chunks(self, part: str) -> Iterator[bytes]:
        """The inflated part in blocks, refused as soon as it inflates past the limit."""
        limit = limits.PART_BYTES.value()
        total = 0
        where = f"{self.display} › {part}"
        try:
            with self.open(part) as stream:
                while block := stream.read(_READ):
                    total += len(block)
                    if total > limit:
                        raise limits.PART_BYTES.refuse(f"the part inflates to more than {limit:,} bytes", where)
                    yield block
        except ZIP_FAULTS as exc:
            raise damaged(where, exc) from exc

    def xml(self, part: str) -> Element:
        """A small part (workbook, relationships, styles) parsed whole, DTDs and entities refused."""
        data = b"".join(self.chunks(part))
        try:
            root: Element = ElementTree.fromstring(data, forbid_dtd=True)
            return root
        except defusedxml.DefusedXmlException as exc:
            raise dtd_refused(f"{self.display} › {part}") from exc
        except ElementTree.ParseError as exc:
            raise SheetError(f"the workbook part is not well-formed XML ({exc})", where=f"{self.display} › {part}",
                             hint="the file is damaged; open and save it in Excel") from exc

    def relationships(self, source: str) -> dict[str, tuple[str, str]]:
        """Id -> (type, target part) of each internal relationship of the part `source` ("" = the package)."""
        folder, name = posixpath.split(source)
        rels = posixpath.join(folder, "_rels", f"{name}.rels")
        if not self.has(rels):
            return {}
        found: dict[str, tuple[str, str]] = {}
        for node in self.xml(rels).iter(f"{_PKG_REL}Relationship"):
            target = node.get("Target") or ""
            if (node.get("TargetMode") or "Internal") == "Internal" and target:
                found[node.get("Id") or ""] = (node.get("Type") or "", resolve(folder, target))
        return found


def damaged(where: str, exc: BaseException) -> SheetError:
    return SheetError(f"the workbook's zip structure is damaged ({type(exc).__name__}: {exc})", where=where,
                      hint="open it in Excel or LibreOffice and save it again")


def dtd_refused(where: str) -> SheetError:
    return SheetError(
        "the workbook's XML declares a DTD or entities, which no spreadsheet program writes; it is refused "
        "(a defence against XML entity bombs)", where=where,
        hint="if the file is genuine, open and save it in Excel or LibreOffice",
    )


def expat_parser(where: str) -> expat.XMLParserType:
    """An expat parser resolving namespaces that refuses DTDs, entity declarations and external entities."""
    parser = expat.ParserCreate(namespace_separator="}")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def refuse(*_: object) -> None:
        raise dtd_refused(where)

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse  # type: ignore[assignment]
    parser.buffer_text = True
    parser.buffer_size = 1 << 16
    return parser


def _folded(name: str) -> str:
    """A part name as compared: percent-decoded, case-folded, with the backslashes some Windows
    tools write into zip item names read as slashes."""
    return unquote(name).replace("\\", "/").lower()


def resolve(folder: str, target: str) -> str:
    """A relationship target -> part name (targets are URIs relative to the source part)."""
    target = target.split("#")[0]
    joined = target.lstrip("/") if target.startswith("/") else posixpath.join(folder, target)
    return posixpath.normpath(joined).lstrip("/")


def rel_kind(rel_type: str) -> str:
    return rel_type.rsplit("/", 1)[-1]


def _main_part_by_content_type(package: Package) -> str | None:
    """The workbook part as `[Content_Types].xml` names it, for a package without `_rels/.rels`."""
    if not package.has("[Content_Types].xml"):
        return None
    for node in package.xml("[Content_Types].xml").iter(f"{_CONTENT_TYPES}Override"):
        if (node.get("ContentType") or "").endswith(".main+xml") and "sheet" in (node.get("ContentType") or ""):
            return (node.get("PartName") or "").lstrip("/") or None
    return None


def read_workbook(package: Package) -> Workbook:
    """The sheets of the workbook (in order) with their parts, and its styles and shared strings."""
    book_part = _workbook_part(package)
    root = package.xml(book_part)
    namespace = root.tag[1:].split("}")[0] if root.tag.startswith("{") else ""
    if namespace not in MAIN_NAMESPACES:
        raise SheetError(f"the workbook part is not SpreadsheetML (its root is {root.tag!r})",
                         where=f"{package.display} › {book_part}")
    by_id = package.relationships(book_part)
    sheets = tuple(_sheet_entry(node, by_id) for node in root.iter(f"{{{namespace}}}sheet"))
    props = root.find(f"{{{namespace}}}workbookPr")
    date1904 = props is not None and (props.get("date1904") or "").lower() in ("1", "true")
    return Workbook(sheets, _related(by_id, "styles"), _related(by_id, "sharedStrings"), date1904)


def _related(by_id: dict[str, tuple[str, str]], kind: str) -> str | None:
    """The part the first relationship of `kind` (its type's last word) points at, if any."""
    return next((target for rel_type, target in by_id.values() if rel_kind(rel_type) == kind), None)


def _workbook_part(package: Package) -> str:
    """The workbook's main part, named by the package's relationships or else by its content type."""
    book_part = _related(package.relationships(""), "officeDocument") or _main_part_by_content_type(package)
    if book_part is None:
        raise SheetError("the package names no workbook part (no officeDocument relationship in _rels/.rels)",
                         where=package.display, hint="the file is damaged or not a workbook; save it again in Excel")
    return book_part


def _sheet_entry(node: Element, by_id: dict[str, tuple[str, str]]) -> SheetEntry:
    """One `<sheet>` of the workbook: its name, visibility, kind and part (None when its relationship is missing)."""
    rel_id = next((node.get(f"{{{ns}}}id") for ns in _DOC_REL_NAMESPACES if node.get(f"{{{ns}}}id")), None)
    rel = by_id.get(rel_id or "")
    kind = _KINDS.get(rel_kind(rel[0]), "unknown") if rel else "unknown"
    return SheetEntry(node.get("name") or "", node.get("state") or "visible", kind, rel[1] if rel else None)


def open_package(path: Path, display: str) -> zipfile.ZipFile:
    """The zip of a workbook, with the reasons a file is no workbook said plainly."""
    check_regular_file(path, display)
    check_container(path, display)
    try:
        return zipfile.ZipFile(path)
    except ZIP_FAULTS as exc:
        raise damaged(display, exc) from exc
