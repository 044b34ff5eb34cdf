"""One block over one sheet: its header, then each row's record, merged by key.

Each row is read by one of two paths over the same compiled fields (`field_readers`): a column
at a time (`column_path`) for the rows that need no finding, else row by row (`row_path`), which
says what is wrong. `by_columns=False` reads every row the plain way; the records are the same
(tests/source/test_column_path.py).
"""

from __future__ import annotations

from operator import attrgetter
from typing import cast

from loader.findings import Finding
from loader.profile import Profile
from loader.source.block_header import BlockHeader
from loader.source.block_merge import RecordMerger
from loader.source.block_records import EMPTY_SOURCE, EMPTY_SOURCE_FIX, BlockRecords
from loader.source.block_rows import BlockContext, Built, LeftOut, VariantReader
from loader.source.column_path import build_columns, can_build_columns
from loader.source.control_chars import control_character_findings
from loader.source.drift_rules import filled_shares
from loader.source.entity_schemas import fields_checker, value_checks
from loader.source.field_readers import variant_readers
from loader.source.field_rules import field_rules
from loader.source.mapping import Block
from loader.source.patterns import PatternTimeout
from loader.source.readers import SheetData, SheetRow, kind_for
from loader.source.readers.kinds import Source
from loader.source.record_places import with_record_names
from loader.source.records import DesiredRecord
from loader.source.renames import renames_of
from loader.source.row_path import build_row

Outcome = DesiredRecord | Built | Finding | None  # what a row gives for a variant; None: `where` left it out


class BlockReader:
    def __init__(self, block: Block, profile: Profile, data: SheetData, *, by_columns: bool = True):
        """`by_columns=False` builds every row the plain way (`row_path`) and merges the rows by
        `RecordMerger`, without the shortcuts; the records are the same."""
        self.block = block
        self.by_columns = by_columns
        self.header = BlockHeader.of(block, data)
        self.header_row = self.header.number
        # a source that is not a sheet names its records by their key, not by a row number
        data = with_record_names(block, data, dict(self.header.columns) if self.header.header else None,
                                 self.header_row)
        self.data = data
        self.filled: tuple[tuple[str, float], ...] = ()  # its columns' shares of filled rows (loader.source.drift)
        entity = profile.entity(block.entity)
        checks = value_checks(entity)
        name_sets: dict[tuple[str, ...], tuple[str, ...]] = {}  # rows mostly manage the same fields
        self.context = BlockContext(block.name, block.entity, block.key,
                                    frozenset(s.name for s in block.fields if s.pii), entity, checks,
                                    fields_checker(entity, checks), data,
                                    lambda names: name_sets.setdefault(names, names))

    def header_problems(self) -> list[Finding]:
        """What keeps the block from being read: its header row, or the columns it names."""
        return self.header.problems()

    def read(self, with_sheet_warnings: bool = True) -> BlockRecords:
        """The block's records, each row read for each variant (`repeat`) and rows of one key merged;
        `with_sheet_warnings`: the sheet's own warnings said here (by the first block reading it)."""
        findings = self._sheet_warnings() if with_sheet_warnings else []
        body = [row for row in self.data.rows if row.number > self.header_row]
        variants = variant_readers(self.block, self.header.columns, self.data)
        outcomes = [self._outcomes(body, variant) for variant in variants]
        records = _distinct_records(outcomes) if self.by_columns else None
        if records is not None:  # what merging gives when every row is a record of its own key
            return self._result(records, findings, len(body), 0, ())
        return self._merged(body, outcomes, findings)

    def _sheet_warnings(self) -> list[Finding]:
        """What the sheet itself says (its warnings), and its columns' shares of filled rows (for drift)."""
        self.filled = filled_shares(self.data, self.header_row)
        return [Finding("warning", code, message, cell) for cell, code, message in self.data.warnings]

    def _merged(self, body: list[SheetRow], outcomes: list[list[Outcome]], findings: list[Finding]) -> BlockRecords:
        """The block's records from what each row gave for each variant, rows of one key merged
        (`RecordMerger`), in row order, with what merging found."""
        key_place = next((s.place for s in self.block.fields if s.name in self.block.key), self.block.place)
        merger = RecordMerger(self.block.key, self.context.pii, {s.name: s for s in self.block.fields if s.collect},
                              key_place)
        rows_filtered = 0
        for index, row in enumerate(body):
            of_row = [of_variant[index] for of_variant in outcomes if of_variant[index] is not None]
            rows_filtered += not of_row
            for outcome in of_row:
                findings += merger.take(cast(DesiredRecord | Built | Finding, outcome), self.data, row.number)
        return self._result(merger.records(), findings, len(body), rows_filtered, tuple(merger.left_out))

    def _result(self, records: tuple[DesiredRecord, ...], findings: list[Finding], rows_read: int,
                rows_filtered: int, left_out: tuple[LeftOut, ...]) -> BlockRecords:
        block = self.block
        findings += control_character_findings(block, records)
        allow_empty = _allow_empty(block.source)
        if allow_empty is False and not rows_read:  # against the history, the plan may make it an error
            findings.append(Finding("warning", EMPTY_SOURCE, f"its source {block.source_display} read 0 records; "
                                    f"{EMPTY_SOURCE_FIX}", block.place))
        return BlockRecords(
            mapping_file=block.place.file, block=block.name, entity=block.entity, source_file=block.source_display,
            sheet=self.data.sheet, key_fields=block.key, pii_fields=self.context.pii, records=records,
            findings=tuple(findings), rows_read=rows_read, place=block.place, rows_filtered=rows_filtered,
            header_row=self.header_row, encoding=block.source.option("encoding"),
            delimiter=block.source.option("delimiter"), left_out=left_out, field_rules=field_rules(block),
            history_rules=block.history_rules(), shape=kind_for(block.source).shape(self.data, self.header_row),
            duplicates=block.duplicates,
            renames=renames_of(block, self.data, self.header.columns, records), on_dropped=block.on_dropped,
            drift=block.drift, columns_read=tuple(dict.fromkeys(name for name, _ in self.header.wanted)),
            filled=self.filled, allow_empty=allow_empty,
        )

    def _outcomes(self, body: list[SheetRow], variant: VariantReader) -> list[Outcome]:
        """What each row of the body gives for one variant: None where its `where` leaves the row out,
        a Finding where `where` ran out of time; rows that need no finding are built a column at a time."""
        outcomes: list[Outcome] = [None] * len(body)
        taken: list[int] = [] if variant.accepts else list(range(len(body)))
        for index, row in enumerate(body if variant.accepts else ()):
            try:
                if not all(accept(row) for accept in variant.accepts):
                    continue
            except PatternTimeout as exc:
                repeat = f" ({variant.repeat})" if variant.repeat else ""
                outcomes[index] = Finding("error", "bad-value", f"where{repeat}: {exc}", self.data.row_ref(row.number))
                continue
            taken.append(index)
        rows = [body[index] for index in taken] if variant.accepts else body
        fast = self.by_columns and can_build_columns(variant)
        built = build_columns(rows, variant, self.context) if fast else [None] * len(rows)
        if not variant.accepts and type(None) not in set(map(type, built)):
            every: list[Outcome] = [*built]
            return every  # every row taken and built by columns: the loop below would copy them
        for index, row, outcome in zip(taken, rows, built, strict=True):
            outcomes[index] = build_row(row, variant, self.context) if outcome is None else outcome
        return outcomes


def _allow_empty(source: Source) -> bool | None:
    """The source's `allow_empty:`; None for a kind without that option (a file)."""
    return bool(source.option("allow_empty", False)) if "allow_empty" in kind_for(source).options else None


def _distinct_records(outcomes: list[list[Outcome]]) -> tuple[DesiredRecord, ...] | None:
    """The records of a block read without `repeat` whose every row gave a record (no finding, no
    warning) of a key no other row has; None for any other block. One dict of the keys tells, without
    the cost of merging."""
    if len(outcomes) != 1 or not outcomes[0]:
        return None
    built = outcomes[0]
    if set(map(type, built)) != {DesiredRecord}:
        return None
    records = cast(list[DesiredRecord], built)
    if len(dict.fromkeys(map(_KEY, records))) != len(records):
        return None
    return tuple(records)


_KEY = attrgetter("key")
