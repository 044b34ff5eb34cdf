"""What results.xlsx keeps of a source sheet besides its values: merged ranges, frozen panes,
column widths and the styling of the header rows.

Values are not read here (results.xlsx copies them as the plan read them). The header rows'
styles come from openpyxl in read-only mode, which stops after the last header row; the parts of
the sheet outside its cells (`<sheetView><pane>`, `<cols>`, `<mergeCells>`) from one streaming
pass over the sheet's XML with defusedxml (no DTD, no entities), matching elements by their local
name so that prefixed (`<x:mergeCell>`) and Strict Open XML namespaces read alike. Merged areas
are bounded: a range larger than MAX_MERGED_CELLS cells (a sheet-wide merge would allocate a
cell object for each of its 17 billion cells) is left out and named in a note.
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from copy import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from defusedxml import ElementTree
from openpyxl import load_workbook
from openpyxl.utils import range_boundaries
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
        book = load_workbook(path, read_only=True, data_only=True, keep_links=False)
    except Exception as exc:  # openpyxl raises many kinds for a package it cannot open
        raise LayoutError(f"{type(exc).__name__}: {exc}") from None
    try:
        if sheet not in book.sheetnames:
            raise LayoutError(f"no sheet {sheet!r}")
        worksheet = book[sheet]
        styles = _header_styles(worksheet, header_row)
        part = getattr(worksheet, "_worksheet_path", None)
        archive = getattr(book, "_archive", None)
        if not isinstance(part, str) or not isinstance(archive, zipfile.ZipFile):
            return SheetLayout(header_styles=styles, notes=("merged ranges, frozen panes and widths not read",))
        with archive.open(part) as source:
            return _scan(source, styles)
    except LayoutError:
        raise
    except Exception as exc:  # a malformed part: the copy keeps its values, without the layout
        raise LayoutError(f"{type(exc).__name__}: {exc}") from None
    finally:
        book.close()


def _header_styles(worksheet: Any, header_row: int) -> dict[tuple[int, int], CellStyle]:
    styles: dict[tuple[int, int], CellStyle] = {}
    for row in worksheet.iter_rows(min_row=1, max_row=max(header_row, 1)):
        for cell in row:
            if getattr(cell, "has_style", False):
                styles[(cell.row, cell.column)] = CellStyle(
                    copy(cell.font), copy(cell.fill), copy(cell.border), copy(cell.alignment),
                    cell.number_format, copy(cell.protection),
                )
    return styles


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _scan(source: IO[bytes], styles: dict[tuple[int, int], CellStyle]) -> SheetLayout:
    merged: list[tuple[int, int, int, int]] = []
    widths: list[tuple[int, int, float]] = []
    notes: list[str] = []
    frozen: str | None = None
    area = 0
    parent_of_rows: Any = None
    for event, element in ElementTree.iterparse(source, events=("start", "end")):
        name = _local(element.tag)
        if event == "start":
            if name == "sheetData":
                parent_of_rows = element
            continue
        if name == "row" and parent_of_rows is not None:
            parent_of_rows.clear()  # cells are not needed here: keep memory flat however long the sheet
        elif name == "pane" and frozen is None and element.get("state") in ("frozen", "frozenSplit"):
            frozen = element.get("topLeftCell") or _split_cell(element)
        elif name == "col":
            width = element.get("width")
            if width is not None and element.get("min") and element.get("max"):
                widths.append((int(element.get("min")), int(element.get("max")), float(width)))
        elif name == "mergeCell" and element.get("ref"):
            bounds = range_boundaries(element.get("ref"))
            min_col, min_row, max_col, max_row = (b or 0 for b in bounds)
            size = (max_col - min_col + 1) * (max_row - min_row + 1)
            if min(min_col, min_row) < 1 or size > MAX_MERGED_CELLS or area + size > MAX_MERGED_CELLS:
                notes.append(f"merged range {element.get('ref')} not kept (over {MAX_MERGED_CELLS:,} cells)")
                continue
            area += size
            merged.append((min_col, min_row, max_col, max_row))
    return SheetLayout(tuple(merged), frozen, tuple(widths), styles, tuple(notes))


def _split_cell(pane: Any) -> str | None:
    from openpyxl.utils import get_column_letter

    try:
        columns, rows = int(float(pane.get("xSplit") or 0)), int(float(pane.get("ySplit") or 0))
    except ValueError:
        return None
    return f"{get_column_letter(columns + 1)}{rows + 1}" if columns or rows else None


def apply_layout(sheet: Worksheet, layout: SheetLayout, width: int) -> None:
    """Give `sheet` (holding the copied values) the source's layout, within its first `width` columns."""
    from openpyxl.utils import get_column_letter

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
