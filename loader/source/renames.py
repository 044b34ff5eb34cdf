"""A block's `renamed:` read from its source: per record the key it had before (a renumbered code).

The previous value sits in a column of the same rows (`renamed: {column: Previous Code}`): each
record whose cell there is not empty and differs from its own key value was renumbered from it.
Or a crosswalk table of another file says it (`renamed: {source: renumbering.csv, from: Old Code,
to: New Code}`): each record whose key value is a `to` of the table was renumbered from that row's
`from`; every such row counts, so two rows of the table renaming to one code reach the plan, which
says so.
What the plan makes of it (renumber, already done, both live, neither) is `loader.plan.renumber`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from loader.findings import Finding
from loader.places import CellRef
from loader.record_fields import CUSTOM
from loader.source.headers import Header, find_header_row
from loader.source.lookups import ReadSheet
from loader.source.mapping import Block
from loader.source.readers import SheetData
from loader.source.records import DesiredRecord

REPLACES = "Replaces"  # the label of a successor naming the key of the record it succeeds


@dataclass(frozen=True)
class Rename:
    """One record's move: its key now (`new`), the key it had before (`old`), and the cell that says so."""

    new: tuple[Any, ...]
    old: tuple[Any, ...]
    cell: CellRef


def renames_of(block: Block, data: SheetData, columns: Mapping[str, int],
               records: Sequence[DesiredRecord]) -> tuple[Rename, ...]:
    """The renames the block's `renamed:` column gives for `records` (none without it)."""
    rule = block.renamed
    if rule is None or rule.column is None or rule.column not in columns or rule.key_field not in block.key:
        return ()
    column = columns[rule.column]
    at = block.key.index(rule.key_field)
    rows = {row.number: row for row in data.rows}
    found = []
    for record in records:
        numbers = [record.row.row] + [cell.row for block_name, cell in record.also_rows if block_name == block.name]
        for number in dict.fromkeys(numbers):  # every row merged into the record: two may disagree
            row = rows.get(number) if number is not None else None
            if row is None or column >= len(row.values):
                continue
            previous = _text(row.values[column])
            if previous is None or previous == _text(record.key[at]):
                continue
            old = (*record.key[:at], previous, *record.key[at + 1:])
            found.append(Rename(record.key, old, data.cell(row.number, column)))
    return tuple(found)


def crosswalk_renames(block: Block, records: Sequence[DesiredRecord], read_sheet: ReadSheet,
                      findings: list[Finding]) -> tuple[Rename, ...] | None:
    """The renames the block's crosswalk gives for `records`; None (a finding added at `renamed:`)
    when the table cannot be read or lacks a column."""
    rule = block.renamed
    crosswalk = rule.crosswalk if rule is not None else None
    if rule is None or crosswalk is None:
        return ()
    data = read_sheet(crosswalk.source, crosswalk.sheet, crosswalk.place)
    if data is None:
        return None
    found = find_header_row(data.rows, [crosswalk.old, crosswalk.new])
    if found is None:
        first = Header.of(data.rows[0]) if data.rows else None
        present = ", ".join(repr(n) for n in first.names()) if first else "none"
        where = f"{data.file} › {data.sheet}" if data.sheet else data.file
        findings.append(Finding("error", "renamed-columns",
                                f"no row near the top of {where} holds both {crosswalk.old!r} and {crosswalk.new!r} "
                                f"(the first row's columns: {present}): name the crosswalk's columns in `from:` "
                                "and `to:`", crosswalk.place))
        return None
    header = Header.of(found)
    old_at, new_at = header.columns[crosswalk.old], header.columns[crosswalk.new]
    at = block.key.index(rule.key_field)
    by_value: dict[str, list[DesiredRecord]] = {}
    for record in records:
        value = _text(record.key[at])
        if value is not None:
            by_value.setdefault(value, []).append(record)
    renames = []
    for row in data.rows:
        if row.number <= header.row:
            continue
        old, new = (_text(row.values[i]) if i < len(row.values) else None for i in (old_at, new_at))
        if old is None or new is None or old == new:
            continue
        for record in by_value.get(new, ()):
            renames.append(Rename(record.key, (*record.key[:at], old, *record.key[at + 1:]),
                                  data.cell(row.number, old_at)))
    return tuple(renames)


def with_successors(records: Sequence[DesiredRecord], renames: Sequence[Rename]) -> tuple[DesiredRecord, ...]:
    """`renamed: {as: successor}`: each record renamed from one old key with the label linking it to
    the record it succeeds (`custom_attributes.Replaces`: the old key value), from the cell that
    names the old key (a successor's key is one field). A record renamed from two keys is left as it
    is (the plan says it is ambiguous)."""
    olds: dict[tuple[Any, ...], set[tuple[Any, ...]]] = {}
    cells: dict[tuple[Any, ...], CellRef] = {}
    for rename in renames:
        olds.setdefault(rename.new, set()).add(rename.old)
        cells.setdefault(rename.new, rename.cell)
    linked = []
    for record in records:
        old = olds.get(record.key)
        if old is None or len(old) != 1:
            linked.append(record)
            continue
        (previous,) = old
        labels = record.fields.get(CUSTOM)
        value = {**(labels if isinstance(labels, dict) else {}), REPLACES: str(previous[0])}
        linked.append(replace(record, fields={**record.fields, CUSTOM: value},
                              cells={**record.cells, f"{CUSTOM}.{REPLACES}": cells[record.key]}))
    return tuple(linked)


def _text(value: Any) -> str | None:
    """A key cell as the text a code is (a whole number without its '.0'); None when empty."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return text or None
