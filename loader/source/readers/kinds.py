"""A source as a value (its kind, where it is, its options) and what a kind of source tells the loader.

Each reader module defines its `KIND`; `loader.source.readers.KINDS` maps each kind's name to it,
and every consumer (reading, fingerprints, the reading child, places, `--results`, `validate`)
asks the kind of a source instead of testing what the source is. A new kind of source is one
module and one line in `KINDS`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from loader.files.fingerprints import display_path
from loader.source.readers.record_rows import FetchFeed, FieldPaths
from loader.source.readers.rows import SheetData, SheetRow

Options = tuple[tuple[str, Any], ...]  # (name, value) pairs, sorted by name: a Source stays hashable


@dataclass(frozen=True)
class Source:
    """One source: the name of its kind, where it is, and how to read it.

    `location` is a file's path for the file kinds, and what the kind reads for the others (a
    query, a URL, a table's name). `name` is its name in the mapping's `sources:` (None for a file
    named by its path). `given` is what a kind is handed in memory (the rows of a `table`): it is
    not part of the value's identity, so a source with large rows is still cheap to compare.
    """

    kind: str
    location: str
    options: Options = ()
    name: str | None = None
    given: Any = field(default=None, compare=False, repr=False)

    @property
    def identity(self) -> tuple[Source, int | None]:
        """What tells two sources apart when read: the value, and which rows were given (two
        mapping files may each give a `units` table of their own)."""
        return self, None if self.given is None else id(self.given)

    def option(self, name: str, default: Any = None) -> Any:
        return next((value for key, value in self.options if key == name), default)

    @property
    def path(self) -> Path:
        """The file of a file kind."""
        return Path(self.location)


def options_of(given: dict[str, Any]) -> Options:
    """Options as a Source holds them: the ones given (None ones left out), sorted by name."""
    return tuple(sorted((k, v) for k, v in given.items() if v is not None))


@dataclass(frozen=True)
class Wanted:
    """What the mappings ask of a source as it is read: the columns their blocks and lookups read
    (a query's columns, the paths of a JSON or XML record), and how to fetch a URL (None: the
    command reads no URL). File kinds read every column and need neither."""

    columns: tuple[FieldPaths, ...] = ()
    fetch: FetchFeed | None = None


@dataclass(frozen=True)
class SourceShape:
    """What was read of a source, to tell drift between cycles: the columns (a header's names, or
    the paths seen) and the rows read below them."""

    columns: tuple[str, ...]
    rows: int


def described_file(source: Source) -> str:
    """A file source's description: its path relative to the working directory when it is inside it."""
    return display_path(source.path)


def its_file(source: Source) -> tuple[Path, ...]:
    return (source.path,)


def no_files(source: Source) -> tuple[Path, ...]:
    return ()


def shape_of(data: SheetData, header_row: int) -> SourceShape:
    """The shape of a table: the names of its header row and the rows below it."""
    header = next((row for row in data.rows if row.number == header_row), SheetRow(header_row, ()))
    names = tuple("" if value is None else str(value).strip() for value in header.values)
    return SourceShape(names, sum(1 for row in data.rows if row.number > header_row))


def values_digest(data: SheetData, header_row: int, columns: Sequence[str]) -> str:
    """An order-independent digest of the values in `columns` (the ones a mapping reads) of the rows
    below the header: the sorted digests of each row's values, so reading the same records in
    another order, or with other unmapped columns, gives the same digest."""
    header = next((row.values for row in data.rows if row.number == header_row), ())
    names = ["" if value is None else str(value).strip() for value in header]
    wanted = sorted(set(columns) & set(names))
    at = [names.index(name) for name in wanted]
    rows = sorted(
        hashlib.sha256(repr([row.values[i] if i < len(row.values) else None for i in at]).encode()).digest()
        for row in data.rows if row.number > header_row
    )
    digest = hashlib.sha256(repr(wanted).encode())
    for row_digest in rows:
        digest.update(row_digest)
    return f"sha256:{digest.hexdigest()}"


ValuesDigest = Callable[[SheetData, int, Sequence[str]], str]


@dataclass(frozen=True)
class SourceKind:
    """What the loader knows of one kind of source: the registry's interface.

    A file kind gives its `suffixes` (a mapping names such a source by its path); any other kind is
    named in a mapping's `sources:` by a key that is the kind's name, and made by `from_mapping`.
    """

    name: str
    # one table of the source (`sheet` None: its only table, or the first visible sheet) with what the
    # mappings want of it; raises SheetError
    read: Callable[[Source, str, str | None, Wanted], SheetData]
    suffixes: frozenset[str] = frozenset()  # lower case, with the dot; empty: not a file kind
    sheet_names: Callable[[Source, str], list[str]] | None = None  # None: one table, no sheets to name
    first_visible_sheet: Callable[[Source, str], str | None] | None = None  # read without `sheet:`
    advertised: tuple[str, ...] = ()  # the suffixes an error about an unknown kind of file suggests
    describe: Callable[[Source], str] = described_file  # for reports, logs and errors: never a credential
    files: Callable[[Source], tuple[Path, ...]] = its_file  # the files reading it opens
    # False: needs a network or credentials, so `validate` reads it only if asked; or the function
    # telling it of each source (a JSON file is read offline, a JSON URL is not)
    offline: bool | Callable[[Source], bool] = True
    in_child: bool = True  # may be read in a reading child process (it can be pickled and read there)
    # None: the digest of its files' bytes; else the digest of the values the mapping reads
    fingerprint: ValuesDigest | None = None
    shape: Callable[[SheetData, int], SourceShape] = shape_of
    # How its rows are named in messages: "cell" (file › sheet › cell, a place the user can open)
    # or "record" (source › record key › column, as a row's number may change from one read to the
    # next: `loader.source.record_places`).
    places: Literal["cell", "record"] = "cell"
    # What `--results` does with it: "copy" its rows, read again, with the outcome columns beside
    # them; or "records": a sheet of the records read (`loader.report.results_records`, which works
    # from the plan alone and tells such a block by its records' places: a "records" kind places by
    # "record").
    results: Literal["copy", "records"] = "copy"
    # a source of this kind from its entry in `sources:` (name, entry, the mapping file's folder),
    # and the keys that entry may hold beside the kind's own (its options: a query's `params`, ...)
    from_mapping: Callable[[str, dict[str, Any], Path], Source] | None = None
    options: frozenset[str] = frozenset()

    def reads_offline(self, source: Source) -> bool:
        """Whether `source` is read without a network or credentials."""
        return self.offline(source) if callable(self.offline) else self.offline

    @property
    def has_sheets(self) -> bool:
        return self.sheet_names is not None

    def size(self, source: Source) -> int:
        """The bytes reading it opens (what decides reading it in a child); 0 for what is not there."""
        total = 0
        for path in self.files(source):
            try:
                total += path.stat().st_size
            except OSError:
                pass
        return total
