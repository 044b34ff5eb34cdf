"""The source seam: a source is a value (its kind, location and options), and every question about
a source (has it sheets, which, read one) goes through the kinds `loader.source.readers` lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from loader.errors import SheetError
from loader.source.readers import (
    KINDS,
    MissingSheet,
    SheetData,
    SheetRow,
    Source,
    SourceKind,
    Wanted,
    file_source,
    first_visible_sheet,
    has_sheets,
    kind_of,
    read_sheet,
    read_source,
    sheet_names,
)


def test_each_suffix_belongs_to_one_kind() -> None:
    suffixes = [suffix for kind in KINDS.values() for suffix in kind.suffixes]
    assert len(suffixes) == len(set(suffixes))
    assert all(suffix == suffix.lower() and suffix.startswith(".") for suffix in suffixes)


@pytest.mark.parametrize(("name", "kind", "sheets"), [("a.XLSX", "xlsx", True), ("a.csv", "csv", False),
                                                       ("a.xls", "old_excel", False), ("a.ods", None, False)])
def test_the_kind_of_a_file_is_told_by_its_suffix(name: str, kind: str | None, sheets: bool) -> None:
    found = kind_of(Path(name))
    assert (found.name if found else None) == kind
    assert has_sheets(Path(name)) is sheets


def test_a_one_table_source_has_no_sheets_to_name(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_text("Code\nA1\n", encoding="utf-8")
    assert sheet_names(path) == [] and first_visible_sheet(path) is None
    assert read_source(file_source(path, delimiter=";"), "a.csv").rows[1].values == ("A1",)


def test_a_kind_no_reader_knows_is_refused_with_the_kinds_there_are(tmp_path: Path) -> None:
    path = tmp_path / "a.dat"
    path.write_bytes(b"PK")
    with pytest.raises(SheetError) as caught:
        read_sheet(path, "a.dat")
    assert caught.value.hint == "use .xlsx, .xlsm or .csv"


@pytest.mark.parametrize(("name", "program", "how"), [
    ("a.numbers", "a Numbers workbook", "File › Export To › Excel…"),
    ("a.ods", "a LibreOffice (OpenDocument) workbook", "File › Save As… with the file type Excel 2007-365 (.xlsx)"),
    ("a.xls", "old binary Excel workbook", "File › Save As… with the file type Excel Workbook (.xlsx)"),
])
def test_another_programs_workbook_is_refused_with_how_to_get_an_xlsx_from_it(
    tmp_path: Path, name: str, program: str, how: str
) -> None:
    path = tmp_path / name
    path.write_bytes(b"PK\x03\x04" + bytes(600) if name != "a.xls" else b"\xd0\xcf\x11\xe0" + bytes(600))
    with pytest.raises(SheetError) as caught:
        read_sheet(path, name)
    assert program in caught.value.message and how in (caught.value.hint or "")


def _table(source: Source, display: str, sheet: str | None, wanted: Wanted) -> SheetData:
    return SheetData(display, sheet, (SheetRow(1, (f"{sheet}:{source.option('encoding')}",)),))


def test_a_new_kind_of_source_is_read_through_the_seam_with_its_sheets_and_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a new kind gives the loader: the sheet named, the first visible one without a name, a
    missing sheet refused with the sheets there are; its options reach its reader."""
    kind = SourceKind("query", _table, frozenset({".sql"}), sheet_names=lambda source, display: ["One", "Two"],
                      first_visible_sheet=lambda source, display: "Two")
    monkeypatch.setitem(KINDS, kind.name, kind)
    source = Source("query", "q.sql", (("encoding", "latin-1"),))
    assert read_source(source, "q.sql", "One").rows[0].values == ("One:latin-1",)
    assert read_source(source, "q.sql").rows[0].values == ("Two:latin-1",)
    with pytest.raises(MissingSheet) as caught:
        read_source(source, "q.sql", "Three")
    assert caught.value.names == ["One", "Two"]
