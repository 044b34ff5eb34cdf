"""Helpers for the mapping/sheet tests: real workbooks written with openpyxl, mapping files on disk."""

from __future__ import annotations

import re
import shutil
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import openpyxl

from loader.profile import Profile, load_profile
from loader.source.sources import SourceSet, read_sources


def write_workbook(path: Path, sheets: Mapping[str, Sequence[Sequence[Any]]], *, hidden: Sequence[str] = ()) -> Path:
    """A workbook with one sheet per entry; rows are written from A1."""
    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
        if name in hidden:
            sheet.sheet_state = "hidden"
    book.save(path)
    return path


def cache_formula_values(
    path: Path, values: Mapping[str, str], sheet_part: str = "xl/worksheets/sheet1.xml", kind: str | None = None
) -> None:
    """Give formula cells a cached value, as Excel would on save (openpyxl cannot write one).

    `values` maps a cell address ("E2") to the cached number or text; `kind` forces the cell
    type ("e" for an error value such as #DIV/0!).
    """
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == sheet_part:
                text = data.decode("utf-8")
                for address, cached in values.items():
                    pattern = re.compile(rf'(<c r="{address}"[^>]*>)(<f>.*?</f>)<v\s*/>')
                    cell_type = f' t="{kind}"' if kind else "" if _is_number(cached) else ' t="str"'
                    text, count = pattern.subn(_cached_cell(cached, cell_type), text)
                    assert count == 1, f"no formula cell {address} in {sheet_part}"
                data = text.encode("utf-8")
            target.writestr(item, data)
    shutil.move(tmp, path)


def _cached_cell(cached: str, cell_type: str) -> Callable[[re.Match[str]], str]:
    def replace(found: re.Match[str]) -> str:
        return found.group(1).replace("<c ", f"<c{cell_type} ", 1) + found.group(2) + f"<v>{cached}</v>"

    return replace


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def write_mapping(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def read(paths: Sequence[Path], profile: Profile | None = None) -> SourceSet:
    return read_sources(list(paths), profile or load_profile())


def messages(sources: SourceSet) -> list[str]:
    """Every finding as "where: message"."""
    found = [*sources.findings, *(f for b in sources.blocks for f in b.findings)]
    return [f"{f.where}: {f.message}" for f in found]
