"""Every error about a source file names the file, not only the mapping line that points at it.

One test per kind of bad file, through the command line (`loader validate`, `loader plan`, a
`lookup:` table, `loader init`): the message holds the file's name and no traceback. A file whose
name no reader knows (a `/etc/passwd`) is refused by its name before it is read: no line of it is
ever shown.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import openpyxl
import pytest
from helpers.raw_xlsx import cells, write_raw_workbook

from loader.cli import main
from loader.errors import EXIT_ERROR

OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
PASSWD = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"


def _mapping(source: str, lookup: str | None = None) -> str:
    name = f"{{column: Name, lookup: {{source: {lookup}, key: Code, value: Name}}}}" if lookup else "{column: Name}"
    return (f"version: 1\nsource: {source}\nentities:\n  schools:\n    entity: school\n    key: [code]\n"
            f"    fields:\n      code: {{column: Code}}\n      name: {name}\n")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "internal error" not in text and "Traceback" not in text, text
    return code, text


def _damaged_zip(path: Path) -> None:
    write_raw_workbook(path, [("S", cells([["Code", "Name"], ["S1", "One"]]))])
    path.write_bytes(path.read_bytes()[:-30])


def _directory(path: Path) -> None:
    path.mkdir()


BAD_FILES: dict[str, tuple[str, Callable[[Path], object], str]] = {
    # kind: (file name, how to make it, what the message says)
    "damaged zip": ("cut.xlsx", _damaged_zip, "zip structure is damaged"),
    "not a workbook": ("text.xlsx", lambda p: p.write_text("Code,Name\n"), "not an Excel workbook"),
    "encrypted": ("locked.xlsx", lambda p: p.write_bytes(OLE + "EncryptedPackage".encode("utf-16-le")),
                  "the workbook is encrypted"),
    "old .xls": ("old.xls", lambda p: p.write_bytes(OLE + bytes(600)), "old binary Excel workbook"),
    "bad UTF-8": ("latin.csv", lambda p: p.write_bytes("Code,Name\nS1,Caf\u00e9\n".encode("latin-1")),
                  "cannot decode the file as UTF-8"),
    "UTF-16 without BOM": ("wide.csv", lambda p: p.write_bytes("Code,Name\nS1,One\n".encode("utf-16-le")),
                           "UTF-16 without a byte order mark"),
    "over the size limit": ("big.csv", lambda p: p.write_text("Code,Name\n" + "S1,One\n" * 100),
                            "more than the limit of 100 bytes"),
    "a directory": ("folder.xlsx", _directory, "the source is a directory"),
    "no spreadsheet extension": ("passwd", lambda p: p.write_text(PASSWD), "not a spreadsheet the loader reads"),
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOADER_MAX_CSV_BYTES", "100")
    return tmp_path


@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_validate_names_the_bad_source_file(project: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    name, make, said = BAD_FILES[kind]
    make(project / name)
    (project / "m.yaml").write_text(_mapping(name), encoding="utf-8")
    code, text = _run(capsys, "validate", "m.yaml")
    assert code == EXIT_ERROR
    assert f"m.yaml:2:9: {name}: " in text and said in text, text


@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_a_bad_lookup_file_is_named_too(project: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    name, make, said = BAD_FILES[kind]
    make(project / name)
    (project / "good.csv").write_text("Code,Name\nS1,One\n", encoding="utf-8")
    (project / "m.yaml").write_text(_mapping("good.csv", lookup=name), encoding="utf-8")
    code, text = _run(capsys, "validate", "m.yaml")
    assert code == EXIT_ERROR
    assert f": {name}: " in text and said in text, text


@pytest.mark.parametrize("kind", ["damaged zip", "no spreadsheet extension"])
def test_plan_names_the_bad_source_file(project: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    name, make, said = BAD_FILES[kind]
    make(project / name)
    (project / "m.yaml").write_text(_mapping(name), encoding="utf-8")
    code, text = _run(capsys, "plan", "m.yaml")
    assert code == EXIT_ERROR
    assert f"m.yaml:2:9: {name}: " in text and said in text, text


@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_init_names_the_bad_workbook(project: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    name, make, said = BAD_FILES[kind]
    make(project / name)
    code, text = _run(capsys, "init", name)
    assert code == EXIT_ERROR
    assert f"{name}: " in text and said in text, text
    assert not (project / "mappings").exists()


@pytest.mark.parametrize("command", ["validate", "plan", "init"])
def test_a_file_with_no_spreadsheet_extension_is_refused_before_it_is_read(
    project: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "passwd").write_text(PASSWD, encoding="utf-8")
    (project / "m.yaml").write_text(_mapping("passwd"), encoding="utf-8")
    code, text = _run(capsys, command, "passwd" if command == "init" else "m.yaml")
    assert code == EXIT_ERROR
    assert "passwd: not a spreadsheet the loader reads: its name has no file extension" in text
    for line in PASSWD.splitlines():
        assert line not in text and line.split(":")[0] + ":x" not in text


def test_a_good_workbook_beside_them_still_reads(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    book = openpyxl.Workbook()
    assert book.active is not None
    book.active.append(["Code", "Name"])
    book.active.append(["S1", "One"])
    book.save(project / "good.xlsx")
    (project / "m.yaml").write_text(_mapping("good.xlsx"), encoding="utf-8")
    code, text = _run(capsys, "validate", "m.yaml")
    assert code == 0, text
