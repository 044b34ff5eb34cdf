"""A kind of source (CSV, workbook, ...) and a source: a file of a kind, with that kind's options.

Each reader module defines its `KIND`; `loader.source.readers` lists them, and everything that
asks about a source (does it have sheets, which, read one) goes through that list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from loader.source.readers.rows import SheetData


@dataclass(frozen=True)
class ReadOptions:
    """How to read a source; each kind reads the options that concern it."""

    delimiter: str | None = None  # CSV: sniffed when None
    encoding: str | None = None  # CSV: told by a byte order mark, else UTF-8, when None
    engine: str = "calamine"  # workbooks: "calamine" (fast) or "openpyxl" (slow; to cross-check readings)


@dataclass(frozen=True)
class SourceKind:
    """What the loader knows of one kind of source."""

    name: str
    suffixes: frozenset[str]  # lower case, with the dot
    # one table of the file (`sheet` None: the first visible), which exists; raises SheetError
    read: Callable[[Path, str, str | None, ReadOptions], SheetData]
    sheet_names: Callable[[Path, str], list[str]] | None = None  # None: one table, no sheets to name
    first_visible_sheet: Callable[[Path, str], str | None] | None = None  # read without `sheet:`
    advertised: tuple[str, ...] = ()  # the suffixes an error about an unknown kind of file suggests

    @property
    def has_sheets(self) -> bool:
        return self.sheet_names is not None


@dataclass(frozen=True)
class Source:
    """One source: where it is, its kind, and how to read it."""

    path: Path
    kind: SourceKind
    options: ReadOptions = ReadOptions()
