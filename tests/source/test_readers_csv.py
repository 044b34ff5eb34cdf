"""CSV files read as written: line ends inside quotes, unclosed quotes, byte order marks, encodings."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from loader.errors import SheetError
from loader.places import CellRef
from loader.source.readers import read_sheet


def _values(path: Path, **options: str) -> list[tuple[int, tuple[object, ...]]]:
    data = read_sheet(path, path.name, None, **options)
    return [(r.number, r.values) for r in data.rows]


def test_a_crlf_inside_a_quoted_value_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_bytes(b'Code,Address\r\nX1,"1 Main St\r\nCarlton"\r\nX2,plain\r\n')
    assert _values(path) == [(1, ("Code", "Address")), (2, ("X1", "1 Main St\r\nCarlton")), (3, ("X2", "plain"))]


def test_an_unterminated_quote_is_an_error_at_its_row_not_a_silent_swallow(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text('Code,Name\nX1,Ann\nX2,"Bob\nX3,Cy\nX4,Di\n', encoding="utf-8")
    with pytest.raises(SheetError) as caught:
        read_sheet(path, "q.csv")
    assert caught.value.message == ("a quoted value that starts on line 3 is never closed, so every following line "
                                    "would be read into it")
    assert caught.value.where == CellRef("q.csv", row=3)


def test_a_byte_order_mark_in_the_middle_does_not_stay_in_values(tmp_path: Path) -> None:
    path = tmp_path / "joined.csv"
    path.write_bytes(codecs.BOM_UTF8 + b"Code,Name\nX1,Ann\n" + codecs.BOM_UTF8 + b"X2,Bob\n")
    assert _values(path) == [(1, ("Code", "Name")), (2, ("X1", "Ann")), (3, ("X2", "Bob"))]


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_files_are_told_by_their_byte_order_mark(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "u.csv"
    path.write_bytes("\ufeffCode;Name\nX1;Café\n".encode(encoding))
    assert _values(path) == [(1, ("Code", "Name")), (2, ("X1", "Café"))]


def test_utf16_without_a_mark_gets_the_utf16_hint(tmp_path: Path) -> None:
    path = tmp_path / "u.csv"
    path.write_bytes("Code,Name\nX1,Ann\n".encode("utf-16-le"))
    with pytest.raises(SheetError) as caught:
        read_sheet(path, "u.csv")
    assert "set `encoding: utf-16`" in (caught.value.hint or "")
    assert _values(path, encoding="utf-16-le")[1] == (2, ("X1", "Ann"))


def test_an_undecodable_byte_is_named_with_its_line_column_and_value(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_bytes("Code;Name\nX1;Café\nX2;Zoë\n".encode("cp1252"))
    with pytest.raises(SheetError) as caught:
        read_sheet(path, "c.csv")
    assert caught.value.message == "cannot decode the file as UTF-8: line 2, column 7 holds the byte 0xE9"
    assert "cp1252" in (caught.value.hint or "")


def test_a_csv_past_the_size_limit_is_refused_before_it_is_read(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.csv"
    path.write_text("Code\n" + "X\n" * 5000, encoding="utf-8")
    monkeypatch.setenv("LOADER_MAX_CSV_BYTES", "4096")
    with pytest.raises(SheetError) as caught:
        read_sheet(path, "big.csv")
    assert caught.value.message.startswith("the file holds 10,005 bytes, more than the limit of 4,096 bytes")
    assert caught.value.hint == "if the file is genuine, raise the limit: LOADER_MAX_CSV_BYTES=16384"
