"""Rows x mapping -> desired records, checked against the entity schemas. No network.

`read_sources` is the entry point of `loader validate` and of the planner. It never stops at the
first problem: mapping, sheet and row problems all become Findings with their place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from loader.errors import MappingError, SheetError
from loader.files.fingerprints import display_path, fingerprint_inputs
from loader.findings import Finding
from loader.places import CellRef, Place
from loader.profile import Profile
from loader.source.block_reader import BlockReader
from loader.source.block_records import BlockRecords
from loader.source.checks import EveryIndex, with_checks
from loader.source.columns_read import Identity, columns_read
from loader.source.drift import values_seen
from loader.source.lookups import ReadSheet, lookup_sources, with_lookups
from loader.source.mapping import Block, LoadedMapping
from loader.source.mapping_file import read_mapping
from loader.source.readers import KINDS, MissingSheet, SheetData, Source, Wanted, kind_for, read_source
from loader.source.readers.record_rows import FetchFeed, FieldPaths
from loader.source.renames import crosswalk_renames, with_successors
from loader.source.source_digests import ValuesRead
from loader.suggestions import did_you_mean
from loader.words import plural

__all__ = ["BlockRecords", "SourceSet", "files_read", "joined", "load_mappings", "read_sources", "readable_in_child",
           "sources_size"]


@dataclass(frozen=True)
class SourceSet:
    blocks: tuple[BlockRecords, ...]  # mapping-file order, files in the order given
    # display path -> "sha256:<hex>" of mapping files and file sources; `kind:name` -> the digest of
    # the values read of a source whose kind digests them (`loader.source.readers.fingerprint_name`)
    fingerprints: dict[str, str]
    findings: tuple[Finding, ...]  # mapping-level problems (where = file:line:col)

    @property
    def has_errors(self) -> bool:
        return any(f.severity == "error" for f in self.findings) or any(b.errors for b in self.blocks)


def files_read(mapping: LoadedMapping) -> set[Path]:
    """The files reading this mapping's blocks opens: sources and lookup tables, resolved."""
    files: set[Path] = set()
    for block in mapping.mapping.blocks if mapping.mapping else ():
        for source in (block.source, *lookup_sources(block)):
            files |= {path.resolve() for path in kind_for(source).files(source)}
    return files


def sources_size(mappings: Sequence[LoadedMapping]) -> int:
    """The size of what these mappings read (what decides reading them in a child process)."""
    return sum(kind_for(s).size(s) for s in _sources_read(mappings))


def readable_in_child(mappings: Sequence[LoadedMapping]) -> bool:
    """Whether every source these mappings read may be read in a reading child process."""
    return all(kind_for(s).in_child for s in _sources_read(mappings))


def _sources_read(mappings: Sequence[LoadedMapping]) -> set[Source]:
    return {source for m in mappings for block in (m.mapping.blocks if m.mapping else ())
            for source in (block.source, *lookup_sources(block))}


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
    online: bool = True,
    fetch: FetchFeed | None = None,
) -> SourceSet:
    """Read every mapping file (paths, or mappings `load_mappings` has read already) and the sheets
    they name; build and check every record.

    `each_block`, when given, is handed each block as soon as it is read, and the SourceSet holds
    what it gives back instead (a reading child sends the records on and keeps the block without
    them, so no more than one block's records are held at a time).

    `online=False` (what `validate` does unless asked): the blocks whose source needs a network or
    credentials (a kind not `offline`) are left unread, said once in a warning. `fetch` is how a
    URL source is fetched (`loader.plan.feed_fetching`; None: a URL source is an error to read).

    Raises MappingError only when a mapping file cannot be read at all (listing every such file).
    """
    paths = [m for m in mappings if not isinstance(m, LoadedMapping)]
    loaded = [m for m in mappings if isinstance(m, LoadedMapping)] + load_mappings(paths, profile)
    every_block = [block for one in loaded for block in (one.mapping.blocks if one.mapping else ())]
    reading = _Reading(profile, online, _SheetCache(columns_read(every_block), fetch),
                       EveryIndex(c for b in every_block for c in b.checks))
    blocks: list[BlockRecords] = []
    for one in loaded:
        reading.findings.extend(one.findings)
        for block in one.mapping.blocks if one.mapping else ():
            read = reading.block(block)
            if read is not None:
                blocks.append(read if each_block is None else each_block(read))
    return reading.source_set(blocks, {display_path(m.path): m.fingerprint for m in loaded})


class _Reading:
    """One `read_sources`: the findings so far, each table read once, and what the fingerprints need."""

    def __init__(self, profile: Profile, online: bool, sheets: _SheetCache, every: EveryIndex) -> None:
        self.profile = profile
        self.online = online
        self.findings: list[Finding] = []
        self.sheets = sheets
        self.inputs: list[Source] = []  # the sources fingerprinted by their files' bytes
        self.values = ValuesRead()  # and those by the values read
        self.unread: list[Block] = []  # left unread: they need a network (online=False)
        self.every = every  # what the `every` checks need of each block, before it is sent on

    def block(self, block: Block) -> BlockRecords | None:
        """The block's records, or None when it could not be read (its findings added)."""
        sources = (block.source, *lookup_sources(block))
        if not self.online and not all(kind_for(s).reads_offline(s) for s in sources):
            self.unread.append(block)
            return None
        self.inputs += [s for s in sources if kind_for(s).fingerprint is None]
        data = self.sheets.get(block, self.findings)
        looked_up = None if data is None else with_lookups(block, self.sheets.lookup_reader(self.findings),
                                                            self.findings)
        if data is None or looked_up is None:
            return None
        reader = BlockReader(looked_up, self.profile, data)
        header_problems = reader.header_problems()
        if header_problems:
            self.findings.extend(header_problems)
            return None
        read = reader.read(self.sheets.first_use(data))
        if looked_up.renamed is not None and looked_up.renamed.crosswalk is not None:
            renames = crosswalk_renames(looked_up, read.records, self.sheets.lookup_reader(self.findings),
                                        self.findings)
            if renames is None:
                return None
            read = replace(read, renames=renames)
        if looked_up.renamed is not None and looked_up.renamed.how == "successor":
            read = replace(read, records=with_successors(read.records, read.renames), renamed_as="successor")
        self.values.add(looked_up, data, read.header_row)
        if looked_up.checks:
            read = with_checks(read, looked_up.checks)
        if looked_up.drift.values:
            read = replace(read, values_seen=values_seen(read))
        self.every.add(read, looked_up.checks)
        return read

    def source_set(self, blocks: list[BlockRecords], known: dict[str, str]) -> SourceSet:
        """The blocks read, with the fingerprints of every input (`known`: the mapping files', taken
        from the bytes parsed) and every finding."""
        complete = not self.unread and not any(f.severity == "error" for f in self.findings)
        # `every` needs every block read: a block left out would make its records look missing
        findings = self.findings + _left_unread(self.unread) + (self.every.findings() if complete else [])
        fingerprints = {**fingerprint_inputs(_files(self.inputs), known), **self.values.fingerprints()}
        return SourceSet(tuple(blocks), dict(sorted(fingerprints.items())), tuple(findings))


def _left_unread(blocks: list[Block]) -> list[Finding]:
    """The one warning that blocks whose source needs a network or credentials were not read."""
    if not blocks:
        return []
    shown = ", ".join(dict.fromkeys(block.source_display for block in blocks))
    blocks_read = f"{plural(len(blocks), 'block')} {'reads' if len(blocks) == 1 else 'read'}"
    return [Finding("warning", "source-online", f"{blocks_read} a source that needs a network or "
                    f"credentials ({shown}): read by `loader plan`, or here with `--read-sources`",
                    blocks[0].source_place)]


def _files(sources: list[Source]) -> list[Path]:
    """The files of file sources, those refused by their name left out (nothing of them was read)."""
    return [path for s in sources if s.kind in KINDS for path in kind_for(s).files(s) if path.is_file()]


class _SheetCache:
    """Each table is read once per `read_sources`, however many blocks use it, asked for the
    columns all of them read."""

    def __init__(self, columns: dict[Identity, tuple[FieldPaths, ...]], fetch: FetchFeed | None) -> None:
        self._columns = columns
        self._fetch = fetch
        self._data: dict[tuple[tuple[Source, int | None], str | None], SheetData | None] = {}
        self._used: set[int] = set()

    def first_use(self, data: SheetData) -> bool:
        seen = id(data) in self._used
        self._used.add(id(data))
        return not seen

    def get(self, block: Block, findings: list[Finding]) -> SheetData | None:
        return self.read(block.source, block.sheet, findings, display=block.source_display,
                         source_place=block.source_place, sheet_place=block.sheet_place or block.place)

    def read(self, source: Source, sheet: str | None, findings: list[Finding], *, display: str,
             source_place: Place, sheet_place: Place) -> SheetData | None:
        kind = kind_for(source)
        if any(not path.exists() for path in kind.files(source)):  # a FIFO is refused by its reader
            findings.append(Finding("error", "source-missing", f"source file not found: {display}", source_place))
            return None
        try:
            if kind.first_visible_sheet is not None and sheet is None:
                sheet = kind.first_visible_sheet(source, display)  # blocks naming it and naming none share a read
            key = (source.identity, sheet if kind.has_sheets else None)
            if key not in self._data:
                wanted = Wanted(self._columns.get(source.identity, ()), self._fetch)
                self._data[key] = read_source(source, display, sheet, wanted)
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
        def read(source: Source, sheet: str | None, place: Place) -> SheetData | None:
            return self.read(source, sheet, findings, display=kind_for(source).describe(source),
                             source_place=place, sheet_place=place)

        return read
