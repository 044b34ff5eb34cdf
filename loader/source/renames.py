"""A block's `renamed:` read from its source: per record the key it had before (a renumbered code).

The previous value sits in a column of the same rows (`renamed: {column: Previous Code}`): each
record whose cell there is not empty and differs from its own key value was renumbered from it.
What the plan makes of it (renumber, already done, both live, neither) is `loader.plan.renumber`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loader.places import CellRef
from loader.source.mapping import Block
from loader.source.readers import SheetData
from loader.source.records import DesiredRecord


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
    if rule is None or rule.column not in columns or rule.key_field not in block.key:
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


def _text(value: Any) -> str | None:
    """A key cell as the text a code is (a whole number without its '.0'); None when empty."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return text or None
