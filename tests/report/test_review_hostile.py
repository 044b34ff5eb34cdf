"""A review workbook as hostile input (`loader decide`): bounded as a source workbook is, its sheets'
XML scanned before the spreadsheet engine allocates. Every probe is one `loader: error:` naming the
file, exit 1, within 30 s and 1.5 GB, never a native crash; nothing recorded."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.probe import run_loader
from helpers.raw_xlsx import cells, workbook_parts, write_raw_workbook

_INDEX = cells([["loader review workbook", 1]])
_FAR = ('<sheetData><row r="1"><c r="A1"><v>1</v></c></row>'
        '<row r="1048576"><c r="XFD1048576"><v>2</v></c></row></sheetData>')
_BLANK_ROW = '<row><c s="0"/></row>'


def _far_cell(path: Path) -> None:
    write_raw_workbook(path, [("Review", _FAR), ("loader", _INDEX)])


def _far_cell_in_the_index(path: Path) -> None:
    write_raw_workbook(path, [("Review", cells([["decision"]])), ("loader", _FAR)])


def _huge_merge(path: Path) -> None:
    body = cells([["a"]]) + '<mergeCells count="1"><mergeCell ref="A1:XFD1048576"/></mergeCells>'
    write_raw_workbook(path, [("Review", body), ("loader", _INDEX)])


def _huge_shared_string(path: Path) -> None:
    sheet = '<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData>'
    write_raw_workbook(path, [("Review", sheet), ("loader", _INDEX)], shared_strings=["x" * 1_500_000])


def _blank_bomb(path: Path) -> None:  # 600 MB of blank cells in a small file, over the 512 MB part limit
    parts = workbook_parts([("Review", "<sheetData>"), ("loader", _INDEX)])
    chunk = (_BLANK_ROW * ((1 << 20) // len(_BLANK_ROW))).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            if name != "xl/worksheets/sheet1.xml":
                archive.writestr(name, data)
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            sheet.write(str(parts["xl/worksheets/sheet1.xml"]).encode())
            for _ in range(600 * (1 << 20) // len(chunk)):
                sheet.write(chunk)
            sheet.write(b"</sheetData></worksheet>")


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


PROBES: dict[str, tuple[Callable[[Path], None], str]] = {
    "a cell at XFD1048576": (_far_cell, "span 17,179,869,184 cells"),
    "a cell at XFD1048576 in the hidden index": (_far_cell_in_the_index, "span 17,179,869,184 cells"),
    "a merged range of the whole sheet": (_huge_merge, "more than the limit of 20,000,000 cells"),
    "a shared string of 1,500,000 characters": (_huge_shared_string, "more than 1,000,000 characters"),
    "a zip bomb of 600 MB of blank cells": (_blank_bomb, "bytes in one part of a workbook"),
    "a named pipe": (_fifo, "named pipe"),
    "a symlink to /dev/zero": (_zero, "a device"),
}


@pytest.mark.parametrize("probe", PROBES, ids=list(PROBES))
def test_a_hostile_review_workbook_is_one_clear_error_within_the_bounds(probe: str, tmp_path: Path) -> None:
    make, message = PROBES[probe]
    make(tmp_path / "review.xlsx")
    result = run_loader(["decide", "review.xlsx", "--by", "ana"], tmp_path)
    result.assert_refused_cleanly()
    assert message in result.stderr and "review.xlsx" in result.stderr
    assert not (tmp_path / "decisions.yaml").exists()
