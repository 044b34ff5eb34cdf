"""`loader history baseline`, the history's side: what a baseline records, and its recording.

For a project loaded before the history existed, a baseline gives every record a plan matched to a
live record W = live for every field its mapping manages, owned by its block and mapping file, as if
the loader had written what is live (which records and fields is worked out on the plan's side,
`baseline_of`: this store knows no plan). The next plan then compares three-way: a field the sheet
changes is an update, a field changed in the platform after the baseline a platform edit.

A baseline writes history, not records: its journal holds `confirm` entries only, so it does not
move the head's serial or last apply (an apply that writes nothing does not), and `loader history`
lists it as a baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from loader.history.journal import FieldWrite
from loader.history.listing import BASELINE
from loader.history.store import History


@dataclass(frozen=True)
class BaselineRecord:
    """One record a baseline records: its key, live id, managed fields (W = before = live) and the
    live record's updated stamp."""

    entity: str
    key: tuple[Any, ...]
    live_id: str
    fields: tuple[FieldWrite, ...]
    updated: tuple[int, str | None] | None


@dataclass(frozen=True)
class BlockBaseline:
    """What a baseline records for one block: its matched records and their managed fields."""

    block: str
    mapping_file: str
    entity: str
    records: tuple[BaselineRecord, ...]
    left_out: int  # matched records blocked by errors: not recorded

    @property
    def fields(self) -> int:
        return sum(len(record.fields) for record in self.records)


def record_baseline(history: History, blocks: Sequence[BlockBaseline], environment: str, *,
                    by: str | None) -> int:
    """Record `blocks` in `history` as one journal of `confirm` entries; the records recorded."""
    writer = history.begin_apply(environment, plan_digest=None, by=by)
    recorded = 0
    try:
        for block in blocks:
            for record in block.records:
                writer.record("confirm", record.entity, record.key, record.live_id, record.fields,
                              updated=record.updated)
                recorded += 1
    except BaseException:
        writer.close()  # what was recorded is folded in by the next command
        raise
    history.finish_apply(writer, {BASELINE: recorded})
    return recorded
