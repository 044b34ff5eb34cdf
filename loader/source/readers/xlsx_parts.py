"""What a fast value reader cannot tell about a worksheet, read from the xlsx zip itself.

calamine gives values only. Three things need the file's XML: merged ranges, formulas that
have no cached value (calamine reads them as empty, silently), and numbers whose number format
pads them with leading zeros ("00000"). Parsing every cell with openpyxl costs ten times the
value read, so this streams the worksheet XML once and looks closely only at the stretches
that contain a formula or a padded style.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from defusedxml import ElementTree

from loader.errors import SheetError

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"

_CELL = re.compile(rb"<c\b([^>]*?)(?:/>|>(.*?)</c>)", re.DOTALL)
_ATTR_R = re.compile(rb'\br="([A-Z]+)([0-9]+)"')
_ATTR_S = re.compile(rb'\bs="([0-9]+)"')
_ATTR_T = re.compile(rb'\bt="([a-zA-Z]+)"')
_FORMULA = re.compile(rb"<f[ />]")
_VALUE = re.compile(rb"<v>[^<]")
_VALUE_TEXT = re.compile(rb"<v>([^<]*)</v>")
_MERGE = re.compile(rb'<mergeCell\b[^>]*\bref="([A-Z]+)([0-9]+)(?::([A-Z]+)([0-9]+))?"')
_PADDED_FORMAT = re.compile(r"^0{2,}$")
_CHUNK = 4 << 20


@dataclass(frozen=True)
class SheetMeta:
    """Merged ranges, uncached formulas, error values and zero-padded numbers of one sheet.

    Rows are 1-based, columns 0-based.
    `merged`: the ranges as (first_row, first_col, last_row, last_col).
    `zero_padded`: row -> {col: width} for numeric cells displayed with leading zeros.
    """

    merged: tuple[tuple[int, int, int, int], ...] = ()
    uncached_formulas: tuple[tuple[int, int], ...] = ()
    zero_padded: dict[int, dict[int, int]] = field(default_factory=dict)
    errors: tuple[tuple[int, int, str], ...] = ()  # cells holding an error value such as #DIV/0!


def column_index(letters: bytes | str) -> int:
    """"A" -> 0, "AA" -> 26."""
    if isinstance(letters, bytes):
        letters = letters.decode("ascii")
    index = 0
    for ch in letters:
        index = index * 26 + (ord(ch) - 64)
    return index - 1


def read_sheet_meta(path: Path, sheet: str) -> SheetMeta:
    try:
        with zipfile.ZipFile(path) as archive:
            sheet_part, styles_part = _parts(archive, sheet)
            padded_styles = _padded_styles(archive, styles_part) if styles_part else {}
            return _scan(archive, sheet_part, padded_styles)
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError) as exc:
        raise SheetError(f"cannot read the workbook structure: {exc}", where=f"{path} › {sheet}") from exc


def _parts(archive: zipfile.ZipFile, sheet: str) -> tuple[str, str | None]:
    """The zip member names of a sheet's XML and of the styles part."""
    book = ElementTree.fromstring(archive.read("xl/workbook.xml"))
    rels = ElementTree.fromstring(archive.read("xl/_rels/workbook.xml.rels"))
    targets = {r.get("Id"): (r.get("Target") or "", r.get("Type") or "") for r in rels.iter(f"{_PKG_REL}Relationship")}
    rel_id = None
    for node in book.iter(f"{_MAIN}sheet"):
        if node.get("name") == sheet:
            rel_id = node.get(f"{_REL}id")
    if rel_id not in targets:
        raise KeyError(f"sheet {sheet!r} has no part")
    styles = next((t for t, kind in targets.values() if kind.endswith("/styles")), None)
    return _member(targets[rel_id][0]), _member(styles) if styles else None


def _member(target: str) -> str:
    return target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join("xl", target))


def _padded_styles(archive: zipfile.ZipFile, part: str) -> dict[bytes, int]:
    """Cell style index (as it appears in s="N") -> width, for formats like "00000"."""
    try:
        root = ElementTree.fromstring(archive.read(part))
    except KeyError:
        return {}
    widths: dict[str, int] = {}
    for fmt in root.iter(f"{_MAIN}numFmt"):
        code = (fmt.get("formatCode") or "").split(";")[0]
        if _PADDED_FORMAT.match(code):
            widths[fmt.get("numFmtId") or ""] = len(code)
    found: dict[bytes, int] = {}
    xfs = root.find(f"{_MAIN}cellXfs")
    if xfs is None or not widths:
        return found
    for index, xf in enumerate(xfs.iter(f"{_MAIN}xf")):
        width = widths.get(xf.get("numFmtId") or "")
        if width:
            found[str(index).encode()] = width
    return found


def _row_chunks(archive: zipfile.ZipFile, part: str) -> Iterator[bytes]:
    """The worksheet XML in pieces that end on a row boundary, so no cell is cut in two."""
    rest = b""
    with archive.open(part) as stream:
        while True:
            block = stream.read(_CHUNK)
            if not block:
                break
            data = rest + block
            cut = data.rfind(b"</row>")
            if cut < 0:
                rest = data
                continue
            cut += len(b"</row>")
            yield data[:cut]
            rest = data[cut:]
    if rest:
        yield rest


def _scan(archive: zipfile.ZipFile, part: str, padded_styles: dict[bytes, int]) -> SheetMeta:
    merged: list[tuple[int, int, int, int]] = []
    uncached: list[tuple[int, int]] = []
    padded: dict[int, dict[int, int]] = {}
    errors: list[tuple[int, int, str]] = []
    needles = [b' s="' + s + b'"' for s in padded_styles]
    for chunk in _row_chunks(archive, part):
        if b"<mergeCell " in chunk:
            for m in _MERGE.finditer(chunk):
                first_col, first_row = column_index(m.group(1)), int(m.group(2))
                last_col = column_index(m.group(3)) if m.group(3) else first_col
                last_row = int(m.group(4)) if m.group(4) else first_row
                merged.append((first_row, first_col, last_row, last_col))
        has_formula = _FORMULA.search(chunk) is not None
        has_padded = any(n in chunk for n in needles)
        has_errors = b' t="e"' in chunk
        if not (has_formula or has_padded or has_errors):
            continue
        for m in _CELL.finditer(chunk):
            attrs, body = m.group(1), m.group(2) or b""
            ref = _ATTR_R.search(attrs)
            if ref is None:
                continue
            row, col = int(ref.group(2)), column_index(ref.group(1))
            kind = _ATTR_T.search(attrs)
            if kind is not None and kind.group(1) == b"e":
                shown = _VALUE_TEXT.search(body)
                errors.append((row, col, shown.group(1).decode("utf-8", "replace") if shown else "an error"))
            # Excel writes <v></v> for a formula whose result is "" (t="str"); openpyxl writes
            # <v></v> or nothing for every formula, since it never calculates.
            if has_formula and _FORMULA.search(body) and not _VALUE.search(body):
                if kind is None or kind.group(1) != b"str":
                    uncached.append((row, col))
            if has_padded:
                style = _ATTR_S.search(attrs)
                if style and style.group(1) in padded_styles and (kind is None or kind.group(1) == b"n"):
                    padded.setdefault(row, {})[col] = padded_styles[style.group(1)]
    return SheetMeta(tuple(merged), tuple(uncached), padded, tuple(errors))
