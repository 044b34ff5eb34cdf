"""Hostile and mistaken files are refused quickly with a message saying what they are.

Bombs are built small (a few KB) with the shape of the real thing; a limit lowered through its
environment variable stands in for the default where the real size would make the test slow.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
from helpers.raw_xlsx import cells, workbook_parts, write_package, write_raw_workbook
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loader.errors import SheetError
from loader.source.readers import read_sheet


def _refusal(path: Path, sheet: str | None = "S") -> SheetError:
    with pytest.raises(SheetError) as caught:
        read_sheet(path, path.name, sheet)
    return caught.value


def test_one_sheet_wide_merged_range_is_refused_before_it_is_filled(tmp_path: Path) -> None:
    body = cells([["a"]]) + '<mergeCells count="1"><mergeCell ref="A1:XFD1048576"/></mergeCells>'
    path = write_raw_workbook(tmp_path / "merge.xlsx", [("S", body)])
    assert path.stat().st_size < 2048
    error = _refusal(path)
    assert error.message.startswith("the merged ranges cover 17,179,869,184 cells (the last: A1:XFD1048576), "
                                    "more than the limit of 20,000,000 cells")
    assert error.where == "merge.xlsx › S"
    assert error.hint == "if the file is genuine, raise the limit: LOADER_MAX_CELLS=80000000"


def test_two_far_apart_cells_are_refused_before_the_value_reader_allocates_the_range(tmp_path: Path) -> None:
    body = ('<sheetData><row r="1"><c r="A1"><v>1</v></c></row>'
            '<row r="1048576"><c r="XFD1048576"><v>2</v></c></row></sheetData>')
    error = _refusal(write_raw_workbook(tmp_path / "far.xlsx", [("S", body)]))
    assert "the cells holding values span 17,179,869,184 cells" in error.message


def test_a_raised_limit_lets_a_large_merge_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = cells([["a"]]) + '<mergeCells count="1"><mergeCell ref="A1:A30"/></mergeCells>'
    path = write_raw_workbook(tmp_path / "m.xlsx", [("S", body)])
    monkeypatch.setenv("LOADER_MAX_CELLS", "20")
    assert "more than the limit of 20 cells" in _refusal(path).message
    monkeypatch.setenv("LOADER_MAX_CELLS", "30")
    assert len(read_sheet(path, "m.xlsx", "S").rows) == 30


def test_a_sheet_inflating_past_the_part_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blank = '<row><c s="0"/></row>' * 30_000  # 630 KB of blank cells in 2 KB
    path = write_raw_workbook(tmp_path / "blank.xlsx", [("S", f"<sheetData>{blank}</sheetData>")])
    assert path.stat().st_size < 4 * 1024
    monkeypatch.setenv("LOADER_MAX_PART_BYTES", "100000")
    error = _refusal(path)
    assert error.where == "blank.xlsx › xl/worksheets/sheet1.xml"
    assert error.message.startswith("the part declares ")
    assert "LOADER_MAX_PART_BYTES=400000" in (error.hint or "")


def test_a_huge_shared_string_is_refused_before_the_value_reader_holds_it(tmp_path: Path) -> None:
    sheet = '<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData>'
    path = write_raw_workbook(tmp_path / "string.xlsx", [("S", sheet)], shared_strings=["x" * 1_500_000])
    assert path.stat().st_size < 16 * 1024
    error = _refusal(path)
    assert error.message.startswith("a shared string holds more than 1,000,000 characters")
    assert error.where == "string.xlsx › xl/sharedStrings.xml"


def test_an_entity_declaration_in_the_workbook_part_is_refused(tmp_path: Path) -> None:
    head = '<?xml version="1.0"?><!DOCTYPE lol [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
    path = write_raw_workbook(tmp_path / "dtd.xlsx", [("S", cells([["a"]]))], workbook_head=head)
    error = _refusal(path)
    assert error.message.startswith("the workbook's XML declares a DTD or entities")
    assert error.where == "dtd.xlsx › xl/workbook.xml"


def test_an_entity_declaration_in_a_worksheet_is_refused(tmp_path: Path) -> None:
    parts = workbook_parts([("S", cells([["a"]]))])
    parts["xl/worksheets/sheet1.xml"] = '<!DOCTYPE w [<!ENTITY e SYSTEM "file:///etc/passwd">]>' + \
        parts["xl/worksheets/sheet1.xml"]
    error = _refusal(write_package(tmp_path / "dtd.xlsx", parts))
    assert error.where == "dtd.xlsx › xl/worksheets/sheet1.xml"


def _patch_members(path: Path, *, flags: int = 0, method: int | None = None) -> Path:
    """Rewrite every member's local and central header: set flag bits, or claim a compression method."""
    data = bytearray(path.read_bytes())
    for signature, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        at = data.find(signature)
        while at >= 0:
            data[at + flag_at] |= flags
            if method is not None:
                data[at + method_at:at + method_at + 2] = method.to_bytes(2, "little")
            at = data.find(signature, at + 4)
    path.write_bytes(bytes(data))
    return path


def test_an_encrypted_zip_member_is_named(tmp_path: Path) -> None:
    path = _patch_members(write_raw_workbook(tmp_path / "enc.xlsx", [("S", cells([["a"]]))]), flags=1)
    assert "is encrypted (zip encryption)" in _refusal(path).message


def test_a_deflate64_member_is_named(tmp_path: Path) -> None:
    path = write_raw_workbook(tmp_path / "d64.xlsx", [("S", cells([["a"]]))])
    error = _refusal(_patch_members(path, method=9))
    assert "compressed with Deflate64, which Excel never writes" in error.message


_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)


def test_an_encrypted_workbook_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "secret.xlsx"
    path.write_bytes(_OLE + "EncryptedInfo".encode("utf-16-le") + "EncryptedPackage".encode("utf-16-le"))
    error = _refusal(path)
    assert error.message == "the workbook is encrypted (protected with a password to open), so it cannot be read"


@pytest.mark.parametrize("name", ["old.xlsx", "old.xls"])
def test_an_old_binary_workbook_says_to_save_it_as_xlsx(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(_OLE + "Workbook".encode("utf-16-le"))
    error = _refusal(path)
    assert "old binary Excel workbook (.xls, Excel 97-2003 format)" in error.message
    assert error.hint == ("open it in Excel or LibreOffice and save as .xlsx: File › Save As… with the file type "
                          "Excel Workbook (.xlsx)")


def test_a_file_that_is_not_a_zip_says_so(tmp_path: Path) -> None:
    path = tmp_path / "text.xlsx"
    path.write_text("Code,Name\n", encoding="utf-8")
    assert "this is not one" in _refusal(path).message


def test_a_device_is_refused_without_reading_it() -> None:
    with pytest.raises(SheetError, match="the source is a device, not a regular file"):
        read_sheet(Path("/dev/zero"), "/dev/zero")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
@pytest.mark.parametrize("name", ["pipe.csv", "pipe.xlsx"])
def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    os.mkfifo(path)
    with pytest.raises(SheetError, match=r"the source is a named pipe \(FIFO\), not a regular file"):
        read_sheet(path, name, "S")


def test_a_damaged_zip_is_a_sheet_error(tmp_path: Path) -> None:
    path = write_raw_workbook(tmp_path / "cut.xlsx", [("S", cells([["a"]]))])
    path.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(SheetError, match="zip structure is damaged"):
        read_sheet(path, "cut.xlsx", "S")
    assert zipfile.is_zipfile(path) is False


def test_a_huge_shared_string_in_prefixed_xml_is_refused_too(tmp_path: Path) -> None:
    sheet = '<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData>'
    path = write_raw_workbook(tmp_path / "string.xlsx", [("S", sheet)], shared_strings=["ok", "x" * 1_500_000],
                              prefix="x")
    assert _refusal(path).message.startswith("a shared string holds more than 1,000,000 characters")


_DAMAGE_BASE = workbook_parts(
    [("S", cells([["Code", "N"], ["A", 5]]) + '<mergeCells count="1"><mergeCell ref="B2:B4"/></mergeCells>')],
    shared_strings=["a", "b"], styles='<cellXfs count="1"><xf numFmtId="0"/></cellXfs>',
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(damage=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=4),
       cut=st.one_of(st.none(), st.integers(min_value=0)))
def test_a_damaged_workbook_is_always_a_sheet_error(tmp_path: Path, damage: list[tuple[int, int]],
                                                    cut: int | None) -> None:
    data = bytearray(write_package(tmp_path / "base.xlsx", _DAMAGE_BASE).read_bytes())
    for at, value in damage:
        data[at % len(data)] = value
    path = tmp_path / "damaged.xlsx"
    path.write_bytes(bytes(data[:cut % len(data)] if cut is not None else data))
    try:
        read_sheet(path, "damaged.xlsx", "S")
    except SheetError:
        pass  # anything else (zlib.error, EOFError, a calamine panic) fails the test
