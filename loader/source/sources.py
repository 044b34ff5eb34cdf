"""Rows x mapping -> desired records, checked against the entity schemas. No network.

`read_sources` is the entry point of `loader validate` and of the planner. It never stops at the
first problem: mapping, sheet and row problems all become Findings with their place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from loader.errors import MappingError, SheetError
from loader.files.fingerprints import display_path, fingerprint_inputs
from loader.findings import Finding
from loader.places import CellRef, Place
from loader.profile import Profile
from loader.source.block_reader import BlockReader
from loader.source.block_records import BlockRecords
from loader.source.lookups import ReadSheet, lookup_files, with_lookups
from loader.source.mapping import Block, LoadedMapping
from loader.source.mapping_file import read_mapping
from loader.source.readers import MissingSheet, SheetData, first_visible_sheet, has_sheets, kind_of, read_sheet
from loader.suggestions import did_you_mean

__all__ = ["BlockRecords", "SourceSet", "files_read", "joined", "load_mappings", "read_sources"]


@dataclass(frozen=True)
class SourceSet:
    blocks: tuple[BlockRecords, ...]  # mapping-file order, files in the order given
    fingerprints: dict[str, str]  # display path -> "sha256:<hex>" of mapping files and sources
    findings: tuple[Finding, ...]  # mapping-level problems (where = file:line:col)

    @property
    def has_errors(self) -> bool:
        return any(f.severity == "error" for f in self.findings) or any(b.errors for b in self.blocks)


def files_read(mapping: LoadedMapping) -> set[Path]:
    """The files reading this mapping's blocks opens: sources and lookup tables, resolved."""
    files: set[Path] = set()
    for block in mapping.mapping.blocks if mapping.mapping else ():
        files |= {path.resolve() for path in (block.source, *lookup_files(block))}
    return files


def joined(parts: Sequence[SourceSet]) -> SourceSet:
    """The SourceSets of consecutive runs of mapping files, sharing no file, as one: what reading
    them all at once gives (each sheet's warnings are said once per run, so no file may be shared)."""
    fingerprints: dict[str, str] = {}
    for part in parts:
        fingerprints.update(part.fingerprints)
    return SourceSet(
        tuple(block for part in parts for block in part.blocks),
        dict(sorted(fingerprints.items())),
        tuple(finding for part in parts for finding in part.findings),
    )


def load_mappings(mapping_paths: Sequence[Path], profile: Profile) -> list[LoadedMapping]:
    """Each mapping file read and parsed once, in the order given.

    Raises MappingError only when a mapping file cannot be read at all (listing every such file).
    """
    unreadable: list[str] = []
    loaded: list[LoadedMapping] = []
    for path in mapping_paths:
        try:
            loaded.append(read_mapping(Path(path), profile))
        except (OSError, UnicodeDecodeError) as exc:
            reason = "file not found" if isinstance(exc, FileNotFoundError) else str(exc)
            unreadable.append(f"{path}: {reason}")
    if unreadable:
        raise MappingError(
            "cannot read mapping file(s):\n  " + "\n  ".join(unreadable),
            hint="check the paths given on the command line",
        )
    return loaded


def read_sources(
    mappings: Sequence[Path] | Sequence[LoadedMapping],
    profile: Profile,
    *,
    each_block: Callable[[BlockRecords], BlockRecords] | None = None,
) -> SourceSet:
    """Read every mapping file (paths, or mappings `load_mappings` has read already) and the sheets
    they name; build and check every record.

    `each_block`, when given, is handed each block as soon as it is read, and the SourceSet holds
    what it gives back instead (a reading child sends the records on and keeps the block without
    them, so no more than one block's records are held at a time).

    Raises MappingError only when a mapping file cannot be read at all (listing every such file).
    """
    paths = [m for m in mappings if not isinstance(m, LoadedMapping)]
    loaded = [m for m in mappings if isinstance(m, LoadedMapping)] + load_mappings(paths, profile)
    known = {display_path(m.path): m.fingerprint for m in loaded}  # hashed from the bytes parsed
    findings: list[Finding] = []
    blocks: list[BlockRecords] = []
    sheets = _SheetCache()
    inputs: list[Path] = []
    for one in loaded:
        mapping = one.mapping
        findings.extend(one.findings)
        if mapping is None:
            continue
        for block in mapping.blocks:
            if block.source.is_file() and kind_of(block.source) is not None:  # else refused unread
                inputs.append(block.source)
            inputs += lookup_files(block)
            data = sheets.get(block, findings)
            if data is None:
                continue
            looked_up = with_lookups(block, sheets.lookup_reader(findings), findings)
            if looked_up is None:
                continue
            block = looked_up
            reader = BlockReader(block, profile, data)
            header_problems = reader.header_problems()
            if header_problems:
                findings.extend(header_problems)
                continue
            read = reader.read(sheets.first_use(data))
            blocks.append(read if each_block is None else each_block(read))
    return SourceSet(tuple(blocks), fingerprint_inputs(inputs, known), tuple(findings))


class _SheetCache:
    """Each sheet is read once per `read_sources`, however many blocks use it."""

    def __init__(self) -> None:
        self._data: dict[tuple[object, ...], SheetData | None] = {}
        self._used: set[int] = set()

    def first_use(self, data: SheetData) -> bool:
        seen = id(data) in self._used
        self._used.add(id(data))
        return not seen

    def get(self, block: Block, findings: list[Finding]) -> SheetData | None:
        return self.read(block.source, block.sheet, findings, display=block.source_display,
                         source_place=block.source_place, sheet_place=block.sheet_place or block.place,
                         delimiter=block.delimiter, encoding=block.encoding)

    def read(
        self,
        source: Path,
        sheet: str | None,
        findings: list[Finding],
        *,
        display: str,
        source_place: Place,
        sheet_place: Place,
        delimiter: str | None = None,
        encoding: str | None = None,
    ) -> SheetData | None:
        if not source.exists():  # a device or a FIFO is refused by the reader, with its own message
            findings.append(Finding("error", "source-missing", f"source file not found: {display}", source_place))
            return None
        is_excel = has_sheets(source)
        try:
            if is_excel and sheet is None:
                sheet = first_visible_sheet(source, display)  # blocks naming it and blocks naming none share one read
            key = (source.resolve(), sheet if is_excel else None, delimiter, encoding)
            if key not in self._data:
                self._data[key] = read_sheet(source, display, sheet, delimiter=delimiter, encoding=encoding)
            return self._data[key]
        except MissingSheet as exc:
            findings.append(Finding(
                "error", "sheet-missing",
                f"{display} has no sheet {exc.sheet!r}; its sheets are: "
                f"{', '.join(repr(n) for n in exc.names)}" + did_you_mean(exc.sheet or "", exc.names),
                sheet_place,
            ))
            return None
        except SheetError as exc:
            # Readers name a place in the sheet when they can; else the finding is at the mapping's line
            # and its message names the file (or the part of it) that could not be read.
            place = exc.where if isinstance(exc.where, CellRef) else source_place
            shown = "" if isinstance(exc.where, CellRef) else f"{exc.where or display}: "
            findings.append(Finding("error", "sheet-unreadable",
                                    shown + exc.message + (f" ({exc.hint})" if exc.hint else ""), place))
            return None

    def lookup_reader(self, findings: list[Finding]) -> ReadSheet:
        def read(source: Path, sheet: str | None, place: Place) -> SheetData | None:
            return self.read(source, sheet, findings, display=display_path(source), source_place=place,
                             sheet_place=place)

        return read
