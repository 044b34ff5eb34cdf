"""What a fast value reader cannot tell about a worksheet, read from the workbook's XML itself.

calamine gives values only. Some things need the worksheet's XML: merged ranges, formulas that
have no cached value (calamine reads them as empty, silently), numbers whose number format pads
them with leading zeros ("00000"), and cells holding an error value. This pass finds the parts
through the package's relationships (`xlsx_package`), and streams the worksheet through expat
(the standard library's C XML parser) with namespaces resolved, so a prefixed `<x:c>` or a Strict
Open XML file reads like any other. A DTD or entity declaration is refused. It also bounds the
sheet before calamine reads it: the cells the values would occupy and the area of merged ranges
(`limits.CELLS`), the inflated bytes of every part it reads (`limits.PART_BYTES`), and the longest
text of a shared string (`limits.STRING_CHARS`, in `xlsx_strings`, which also finds the rich texts
calamine trims). A date serial below 1 under a date format, which calamine reads as a time of day,
is kept to be read as a date (but 0 of the 1900 system, Excel's "day 0", shows 00:00:00).

Speed: calling Python for every element of a 200,000-row sheet would cost several times the value
read, so blocks of plain rows that hold nothing this pass wants are left out of the parse after
byte searches have shown so (`xlsx_blocks`); their extent still counts towards the bounds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from loader.errors import SheetError
from loader.source.readers import limits
from loader.source.readers.xlsx_blocks import PlainRows, column_index, row_blocks
from loader.source.readers.xlsx_package import (
    MAIN_NAMESPACES,
    ZIP_FAULTS,
    Package,
    SheetEntry,
    Workbook,
    damaged,
    expat_parser,
    open_package,
    read_workbook,
)
from loader.source.readers.xlsx_strings import Runs, read_strings

_PADDED_FORMAT = re.compile(r"^0{2,}$")
_REF = re.compile(r"^\$?([A-Za-z]{1,3})\$?([0-9]{1,7})$")
_MAX_ROW, _MAX_COL = 1_048_576, 16_384


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
    date1904: bool = False
    # row -> {col: serial} for date-formatted numbers below 1, which calamine reads as a time of day
    early_dates: dict[int, dict[int, float]] = field(default_factory=dict)
    # row -> {col: text} for rich text whose runs begin or end with whitespace, which calamine trims
    rich_texts: dict[int, dict[int, str]] = field(default_factory=dict)


def cell_position(ref: str) -> tuple[int, int] | None:
    """"B3" -> (3, 1): 1-based row, 0-based column; None for anything else."""
    m = _REF.match(ref)
    if m is None:
        return None
    return int(m.group(2)), column_index(m.group(1))


def sheet_entries(path: Path, display: str) -> tuple[SheetEntry, ...]:
    """Every sheet the workbook part lists, in order, with its kind and visibility."""
    with open_package(path, display) as archive:
        return _workbook(Package(archive, display)).sheets


def read_sheet_meta(path: Path, sheet: str, display: str | None = None) -> SheetMeta:
    """Scan one sheet's XML (the sheet must exist); raises SheetError naming the part at fault."""
    display = display or str(path)
    with open_package(path, display) as archive:
        package = Package(archive, display)
        book = _workbook(package)
        entry = book.sheet(sheet)
        where = f"{display} › {sheet}"
        if entry is None:
            raise SheetError(f"the workbook part lists no sheet {sheet!r}", where=display)
        if entry.kind != "worksheet" or entry.part is None:
            raise SheetError(f"the sheet is a {entry.kind}, not a worksheet: it holds no cells to read", where=where,
                             hint="name a worksheet in `sheet:`")
        try:
            padded, dated = _special_styles(package, book.styles) if book.styles else ({}, set())
            rich: dict[int, str] = {}
            if book.shared_strings:
                rich = read_strings(package, book.shared_strings)
            scan = _SheetScan(padded, dated, where, book.date1904, rich)
            _parse_stream(package, entry.part, scan)
        except ZIP_FAULTS as exc:
            raise damaged(where, exc) from exc
    return SheetMeta(tuple(scan.merged), tuple(scan.uncached), scan.padded, tuple(scan.errors), book.date1904,
                     scan.early_dates, scan.rich_texts)


def _workbook(package: Package) -> Workbook:
    try:
        return read_workbook(package)
    except ZIP_FAULTS as exc:
        raise damaged(package.display, exc) from exc


def _special_styles(package: Package, part: str) -> tuple[dict[str, int], set[str]]:
    """Cell style indexes (as in s="N"): zero-padded ones -> width ("00000"), and those showing a date."""
    if not package.has(part):
        return {}, set()
    root = package.xml(part)
    namespace = root.tag[1:].split("}")[0] if root.tag.startswith("{") else ""
    main = f"{{{namespace}}}"
    widths: dict[str, int] = {}
    dated_formats = set(_BUILTIN_DATES)
    for fmt in root.iter(f"{main}numFmt"):
        full = fmt.get("formatCode") or ""
        code = full.split(";")[0]
        if _PADDED_FORMAT.match(code):
            widths[fmt.get("numFmtId") or ""] = len(code)
        if _shows_date(code):
            dated_formats.add(fmt.get("numFmtId") or "")
    padded: dict[str, int] = {}
    dated: set[str] = set()
    xfs = root.find(f"{main}cellXfs")
    if xfs is None:
        return padded, dated
    for index, xf in enumerate(xfs.iter(f"{main}xf")):
        number_format = xf.get("numFmtId") or "0"
        width = widths.get(number_format)
        if width:
            padded[str(index)] = width
        if number_format in dated_formats:
            dated.add(str(index))
    return padded, dated


# Built-in number formats that show a date (ECMA-376 Part 1, 18.8.30), with the East Asian ones.
_BUILTIN_DATES = frozenset(str(n) for n in (14, 15, 16, 17, 22, *range(27, 37), *range(50, 59)))
_FORMAT_NOISE = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]|_.|\*.')


def _shows_date(code: str) -> bool:
    """True for a number format with a day or a year in it ("dd/mm/yyyy", "d-mmm"), not "[h]:mm" or "0.00"."""
    bare = _FORMAT_NOISE.sub("", code).lower()
    return "d" in bare or "y" in bare


def _parse_stream(package: Package, part: str, scan: _SheetScan) -> None:
    """Feed the worksheet to expat block by block (blocks end on a row's end tag); a block of plain
    rows is left out (see `xlsx_blocks`), everything else goes through the parser with its handlers."""
    where = f"{package.display} › {part}"
    parser = expat_parser(where)
    parser.StartElementHandler = scan.start
    parser.EndElementHandler = scan.end
    parser.CharacterDataHandler = scan.text
    prefixes: set[str | None] = set()

    def declared(prefix: str | None, uri: str) -> None:
        if uri in MAIN_NAMESPACES:
            prefixes.add(prefix)

    parser.StartNamespaceDeclHandler = declared
    fast: PlainRows | None = None
    started = False
    try:
        for block, whole_rows in row_blocks(package.chunks(part)):
            if fast is None and started and len(prefixes) == 1:
                fast = PlainRows(next(iter(prefixes)) or "", scan)
            if whole_rows and fast is not None and fast.skips(block):
                continue
            parser.Parse(block, False)
            started = started or scan.in_sheet_data
        parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise SheetError(f"the worksheet XML is not well-formed ({expat.errors.messages[exc.code]}, "
                         f"line {exc.lineno}, column {exc.offset})", where=where,
                         hint="the file is damaged; open and save it in Excel or LibreOffice") from exc


class _SheetScan:
    """expat handlers over one worksheet: tracks the current cell and collects what calamine cannot tell."""

    def __init__(self, padded_styles: dict[str, int], dated_styles: set[str], where: str, date1904: bool = False,
                 rich_strings: dict[int, str] | None = None):
        self.date1904 = date1904
        self.rich_strings = rich_strings or {}
        self.rich_texts: dict[int, dict[int, str]] = {}
        self.runs = Runs()
        self.padded_styles = padded_styles
        self.dated_styles = dated_styles
        # The cell kinds and styles `_cell` notes something for; any other cell costs it no call.
        self.noted_kinds = {"e", "inlineStr", "s"} if self.rich_strings else {"e", "inlineStr"}
        self.noted_styles = {style for style, width in padded_styles.items() if width} | dated_styles
        self.early_dates: dict[int, dict[int, float]] = {}
        self.where = where
        self.merged: list[tuple[int, int, int, int]] = []
        self.uncached: list[tuple[int, int]] = []
        self.padded: dict[int, dict[int, int]] = {}
        self.errors: list[tuple[int, int, str]] = []
        self.cell_limit = limits.CELLS.value()
        self.merged_area = 0
        self.row = 0
        self.col = -1
        self.min_row = self.min_col = 1 << 30
        self.max_row = self.max_col = -1
        self.kind: str | None = None
        self.style: str | None = None
        self.formula = False
        self.has_value = False
        self.collected: list[str] | None = None
        self.value_text = ""
        self.in_sheet_data = False

    def skipped_rows(self, first_row: int, last_row: int, widest: int) -> None:
        """Rows left out of the parse: only their extent counts (they hold nothing else wanted)."""
        self.row, self.col = last_row, -1
        self._extent(first_row, 0)
        self._extent(last_row, widest)

    def start(self, name: str, attrs: dict[str, str]) -> None:
        namespace, _, local = name.rpartition("}")
        if namespace not in MAIN_NAMESPACES:
            return
        if local == "c":
            ref = attrs.get("r")
            position = cell_position(ref) if ref else None
            if position is None:
                self.col += 1  # r is optional: the next cell of the row
            else:
                self.row, self.col = position
            self.kind = attrs.get("t")
            self.style = attrs.get("s")
            self.formula = False
            self.has_value = False
            self.value_text = ""
        elif local == "v":
            self.collected = []
        elif local == "f":
            self.formula = True
        elif local == "is":
            self.has_value = True
            self.runs = Runs()
            self.runs.inside = True
        elif self.runs.inside:
            self.runs.start(local)
        elif local == "row":
            ref = attrs.get("r")
            self.row = int(ref) if ref and ref.isdigit() else self.row + 1
            self.col = -1
        elif local == "mergeCell":
            self._merge(attrs.get("ref") or "")
        elif local == "sheetData":
            self.in_sheet_data = True

    def text(self, data: str) -> None:
        if self.collected is not None:
            self.collected.append(data)
        elif self.runs.inside:
            self.runs.text(data)

    def end(self, name: str) -> None:
        namespace, _, local = name.rpartition("}")
        if namespace not in MAIN_NAMESPACES:
            return
        if local == "v":
            if self.collected is not None:
                self.value_text = "".join(self.collected)
                self.has_value = self.has_value or bool(self.value_text)
            self.collected = None
        elif local == "c":
            self._cell()
        elif local == "is":
            self.runs.inside = False
        elif self.runs.inside:
            self.runs.end(local)

    def _cell(self) -> None:
        row, col = self.row, self.col
        if not (1 <= row <= _MAX_ROW and 0 <= col < _MAX_COL):
            raise SheetError(f"a cell lies outside the sheet (row {row}, column {col + 1})", where=self.where,
                             hint="the file is damaged; open and save it in Excel or LibreOffice")
        if self.has_value or self.formula:
            self._extent(row, col)
        kind = self.kind
        if kind in self.noted_kinds:
            self._noted_kind(row, col, kind)
        # Excel writes <v></v> for a formula whose result is "" (t="str"); openpyxl writes <v></v> or
        # nothing for every formula, since it never calculates. An inline string holds its value in <is>.
        if self.formula and not self.has_value and kind not in ("str", "inlineStr"):
            self.uncached.append((row, col))
        if self.style in self.noted_styles and self.has_value and (kind is None or kind == "n"):
            self._noted_number(row, col)

    def _noted_kind(self, row: int, col: int, kind: str) -> None:
        """An error value, or text whose leading or trailing whitespace calamine trims."""
        if kind == "e":
            self.errors.append((row, col, self.value_text or "an error"))
        elif kind == "inlineStr":
            if self.runs.trimmed():
                self.rich_texts.setdefault(row, {})[col] = self.runs.joined()
        elif self.value_text.isdigit():  # a shared string, when the workbook has rich ones
            rich = self.rich_strings.get(int(self.value_text))
            if rich is not None:
                self.rich_texts.setdefault(row, {})[col] = rich

    def _noted_number(self, row: int, col: int) -> None:
        """A number whose style shows it zero-padded, or as a date."""
        assert self.style is not None
        width = self.padded_styles.get(self.style)
        if width:
            self.padded.setdefault(row, {})[col] = width
        else:
            self._early_date(row, col)

    def _early_date(self, row: int, col: int) -> None:
        try:
            serial = float(self.value_text)
        except ValueError:
            return
        # Serial 0 of the 1900 date system is Excel's "day 0" (1900-01-00), no date of any calendar:
        # Excel shows its time, 00:00:00, which is what calamine reads. Below 0 or in 1904, a date.
        if serial < 1 and (serial != 0 or self.date1904):
            self.early_dates.setdefault(row, {})[col] = serial

    def _extent(self, row: int, col: int) -> None:
        grew = False
        if row < self.min_row:
            self.min_row, grew = row, True
        if row > self.max_row:
            self.max_row, grew = row, True
        if col < self.min_col:
            self.min_col, grew = col, True
        if col > self.max_col:
            self.max_col, grew = col, True
        if grew:
            area = (self.max_row - self.min_row + 1) * (self.max_col - self.min_col + 1)
            if area > self.cell_limit:
                raise limits.CELLS.refuse(
                    f"the cells holding values span {area:,} cells (rows {self.min_row}-{self.max_row}, "
                    f"{self.max_col - self.min_col + 1:,} columns)", self.where)

    def _merge(self, ref: str) -> None:
        first, _, last = ref.partition(":")
        start = cell_position(first)
        end = cell_position(last) if last else start
        if start is None or end is None:
            return
        first_row, last_row = sorted((start[0], end[0]))
        first_col, last_col = sorted((start[1], end[1]))
        area = (last_row - first_row + 1) * (last_col - first_col + 1)
        self.merged_area += area
        if self.merged_area > self.cell_limit:
            raise limits.CELLS.refuse(f"the merged ranges cover {self.merged_area:,} cells (the last: {ref})",
                                      self.where)
        self.merged.append((first_row, first_col, last_row, last_col))
