"""What reading one mapping block gives: its records, the problems of its rows, and how it was read."""

from __future__ import annotations

from dataclasses import dataclass, field

from loader.findings import Finding
from loader.places import MappingPlace
from loader.source.block_rows import LeftOut
from loader.source.drift_rules import DriftRules
from loader.source.mapping import BlockHistoryRules, DuplicateRule, OnDropped
from loader.source.readers import SourceShape
from loader.source.records import DesiredRecord
from loader.source.renames import Rename

EMPTY_SOURCE = "empty-source"
EMPTY_SOURCE_FIX = ("check the query's params: or the records: path (if no records is right, set allow_empty: true "
                    "on the source)")


@dataclass(frozen=True)
class BlockRecords:
    """The records one mapping block built, and the problems of its rows."""

    mapping_file: str  # display path of the mapping file
    block: str
    entity: str
    source_file: str  # the source described (a workbook's or CSV's display path)
    sheet: str | None
    key_fields: tuple[str, ...]
    pii_fields: frozenset[str]
    records: tuple[DesiredRecord, ...]  # valid records, identical duplicate rows merged
    findings: tuple[Finding, ...]  # row errors and warnings; where = str(CellRef)
    rows_read: int  # non-blank rows below the header
    place: MappingPlace  # where the block is defined
    rows_filtered: int = 0  # rows `where` left out
    header_row: int = 1  # the header row read (the one found, for `header_row: auto`); with
    # encoding and delimiter, how the sheet was read (results.xlsx reads it again the same way)
    encoding: str | None = None
    delimiter: str | None = None
    left_out: tuple[LeftOut, ...] = ()  # rows errors kept from becoming records (blocked, not "not in source")
    field_rules: tuple[tuple[str, str, str], ...] = ()  # (field, "file:line", text) of each field (field_rules.py)
    history_rules: BlockHistoryRules = field(default_factory=BlockHistoryRules)  # on_platform_edit, take_over, formerly
    shape: SourceShape | None = None  # the columns seen and rows read, to tell drift between cycles
    duplicates: DuplicateRule | None = None  # `duplicates:`: creates resembling a live person are held
    renames: tuple[Rename, ...] = ()  # the records its `renamed:` says were renumbered
    renamed_as: str = "update"  # `renamed: {as:}`: update (a renumber) or successor (a new record linked)
    on_dropped: OnDropped | None = None  # what its `on_dropped:` sets on records dropped from the source
    drift: DriftRules = field(default_factory=DriftRules)  # the block's `drift:` and repeat patterns
    columns_read: tuple[str, ...] = ()  # the header's columns the block reads (its variants' too)
    values_seen: tuple[tuple[str, tuple[str, ...]], ...] = ()  # each `drift.values` field: its distinct values
    filled: tuple[tuple[str, float], ...] = ()  # each column of the header: the share of rows holding a value
    # (said by the first block reading a sheet only)
    allow_empty: bool | None = None  # its source's `allow_empty:` (None: a file, whose kind has no such option)

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")
