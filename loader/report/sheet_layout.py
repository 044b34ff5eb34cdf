"""What results.xlsx keeps of a source sheet besides its values: merged ranges, frozen panes,
column widths and the styling of the header rows.

Values are not read here (results.xlsx copies them as the plan read them). openpyxl reads the
package (relationships, the worksheet's part, the stylesheet); one streaming expat pass over the
worksheet's XML, building no tree and refusing a DTD (so no entity can expand), finds the style of
each header-row cell, `<sheetView><pane>`, `<cols>` and `<mergeCells>`, matching elements by their
local name so that prefixed (`<x:mergeCell>`) and Strict Open XML namespaces read alike. Merged areas
are bounded: a range larger than MAX_MERGED_CELLS cells (a sheet-wide merge would allocate a
cell object for each of its 17 billion cells) is left out and named in a note.
"""

from __future__ import annotations

from collections.abc import Mapping
from copy import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from xml.parsers import expat

from openpyxl.cell.read_only import ReadOnlyCell
from openpyxl.reader.excel import ExcelReader
from openpyxl.utils.cell import (
    column_index_from_string,
    coordinate_from_string,
    get_column_letter,
    range_boundaries,
)
from openpyxl.worksheet.worksheet import Worksheet

MAX_MERGED_CELLS = 1_000_000  # per range and in all; a merge past it is left out with a note


@dataclass(frozen=True)
class CellStyle:
    font: Any
    fill: Any
    border: Any
    alignment: Any
    number_format: str
    protection: Any


@dataclass(frozen=True)
class SheetLayout:
    """Rows and columns are 1-based."""

    merged: tuple[tuple[int, int, int, int], ...] = ()  # (min_col, min_row, max_col, max_row)
    frozen: str | None = None  # the top-left cell of the scrolling pane, e.g. "A4"
    widths: tuple[tuple[int, int, float], ...] = ()  # (first column, last column, width)
    header_styles: Mapping[tuple[int, int], CellStyle] = field(default_factory=dict)  # (row, column)
    notes: tuple[str, ...] = ()

    @property
    def last_column(self) -> int:
        """The last column a merged range reaches (0 without merges)."""
        return max((r[2] for r in self.merged), default=0)


class LayoutError(Exception):
    """The layout could not be read; the values are copied without it."""


def read_layout(path: Path, sheet: str, header_row: int) -> SheetLayout:
    """The layout of `sheet` of the workbook at `path`; LayoutError when it cannot be read."""
    try:
        reader = _StylesReader(path, read_only=True, data_only=True)
        reader.read()
    except Exception as exc:  # openpyxl raises many kinds for a package it cannot open
        raise LayoutError(f"{type(exc).__name__}: {exc}") from None
    try:
        part = reader.parts.get(sheet)
        if part is None:
            raise LayoutError(f"no worksheet {sheet!r}")
        with reader.archive.open(part) as source:
            scan = _Scan(header_row)
            scan.run(source)
        styles = {place: _style(reader.wb, style_id) for place, style_id in scan.header_style_ids.items()}
        return SheetLayout(tuple(scan.merged), scan.frozen, tuple(scan.widths), styles, tuple(scan.notes))
    except LayoutError:
        raise
    except Exception as exc:  # a malformed part: the copy keeps its values, without the layout
        raise LayoutError(f"{type(exc).__name__}: {exc}") from None
    finally:
        reader.archive.close()


class _StylesReader(ExcelReader):  # type: ignore[misc]
    """openpyxl's package reader for the workbook's styles and the part of each worksheet only:
    no shared strings (values are not read here) and no worksheet objects (a read-only worksheet
    parses a whole sheet that has no `<dimension>` just to size itself)."""

    parts: dict[str, str]

    def read_strings(self) -> None:
        self.shared_strings: list[str] = []

    def read_worksheets(self) -> None:
        self.parts = {
            sheet.name: rel.target
            for sheet, rel in self.parser.find_sheets()
            if rel.target in self.valid_files and "chartsheet" not in rel.Type
        }


class _BookHolder:
    """What a ReadOnlyCell needs of its sheet to look its style up: the workbook."""

    title = ""

    def __init__(self, book: Any) -> None:
        self.parent = book


def _style(book: Any, style_id: int) -> CellStyle:
    cell = ReadOnlyCell(_BookHolder(book), 1, 1, None, "n", style_id)
    return CellStyle(
        copy(cell.font), copy(cell.fill), copy(cell.border), copy(cell.alignment),
        cell.number_format, copy(cell.protection),
    )


class _Scan:
    """expat callbacks over one worksheet part: elements by local name (any prefix or namespace),
    no tree kept, no DTD (so no entity can expand)."""

    def __init__(self, header_row: int) -> None:
        self.header_row = header_row
        self.merged: list[tuple[int, int, int, int]] = []
        self.widths: list[tuple[int, int, float]] = []
        self.notes: list[str] = []
        self.frozen: str | None = None
        self.header_style_ids: dict[tuple[int, int], int] = {}
        self.area = 0
        self.row = 0
        self.column = 0

    def run(self, source: IO[bytes]) -> None:
        parser = expat.ParserCreate(namespace_separator="}")
        parser.StartDoctypeDeclHandler = self.refuse_dtd
        parser.EntityDeclHandler = self.refuse_dtd
        parser.StartElementHandler = self.start
        parser.ParseFile(source)

    def refuse_dtd(self, *_: object) -> None:
        raise LayoutError("the sheet's XML declares a DTD")

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        name = tag[tag.rfind("}") + 1 :]
        if name == "c":
            if self.row <= self.header_row:
                self._header_cell(attributes)
        elif name == "row":
            self.row = int(attributes.get("r") or self.row + 1)
            self.column = 0
        elif name == "pane" and self.frozen is None and attributes.get("state") in ("frozen", "frozenSplit"):
            self.frozen = attributes.get("topLeftCell") or _split_cell(attributes)
        elif name == "col" and "width" in attributes and "min" in attributes and "max" in attributes:
            self.widths.append((int(attributes["min"]), int(attributes["max"]), float(attributes["width"])))
        elif name == "mergeCell" and attributes.get("ref"):
            self._merge(attributes["ref"])

    def _header_cell(self, attributes: dict[str, str]) -> None:
        reference = attributes.get("r")
        if reference:
            column, row = coordinate_from_string(reference)
            self.column = column_index_from_string(column)
            self.row = row
        else:
            self.column += 1
        style = attributes.get("s")
        if style and style != "0":
            self.header_style_ids[(self.row, self.column)] = int(style)

    def _merge(self, ref: str) -> None:
        min_col, min_row, max_col, max_row = (b or 0 for b in range_boundaries(ref))
        size = (max_col - min_col + 1) * (max_row - min_row + 1)
        if min(min_col, min_row) < 1 or size > MAX_MERGED_CELLS or self.area + size > MAX_MERGED_CELLS:
            self.notes.append(f"merged range {ref} not kept (over {MAX_MERGED_CELLS:,} cells)")
            return
        self.area += size
        self.merged.append((min_col, min_row, max_col, max_row))


def _split_cell(pane: Mapping[str, str]) -> str | None:
    try:
        columns, rows = int(float(pane.get("xSplit") or 0)), int(float(pane.get("ySplit") or 0))
    except ValueError:
        return None
    return f"{get_column_letter(columns + 1)}{rows + 1}" if columns or rows else None


def apply_layout(sheet: Worksheet, layout: SheetLayout, width: int) -> None:
    """Give `sheet` (holding the copied values) the source's layout, within its first `width` columns."""
    for (row, column), style in layout.header_styles.items():
        if column > width:
            continue
        cell = sheet.cell(row=row, column=column)
        cell.font, cell.fill, cell.border = style.font, style.fill, style.border
        cell.alignment, cell.number_format, cell.protection = style.alignment, style.number_format, style.protection
    for first, last, size in layout.widths:
        for column in range(first, min(last, width) + 1):
            sheet.column_dimensions[get_column_letter(column)].width = size
    for min_col, min_row, max_col, max_row in layout.merged:
        sheet.merge_cells(start_row=min_row, start_column=min_col, end_row=max_row, end_column=max_col)
    if layout.frozen:
        sheet.freeze_panes = layout.frozen
