"""`loader history baseline`: record the live state of the records a project's mappings name.

For a project loaded before the history existed: every record the plan matched to a live record
gets W = live for every field its mapping manages (each `custom_attributes` label on its own, set-like
lists element by element), owned by its block and mapping file, as if the loader had written what
is live. The next plan then compares three-way: a field the sheet changes is an update, a field
changed in the platform after the baseline a platform edit.

A baseline writes history, not records: its journal holds `confirm` entries only, so it does not
move the head's serial or last apply (an apply that writes nothing does not), and `loader history`
lists it as a baseline. Records blocked by errors are left out, and counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loader.history.comparable import comparable
from loader.history.journal import FieldWrite
from loader.history.lines import Owner, label_field
from loader.history.listing import BASELINE
from loader.history.store import History
from loader.live_records import updated_stamp
from loader.plan.model import Plan, RecordPlan
from loader.plan.record import key_json
from loader.profile import Profile
from loader.record_fields import CUSTOM
from loader.source.records import DesiredRecord
from loader.source.sources import SourceSet


@dataclass(frozen=True)
class BaselineRecord:
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


def baseline_of(plan: Plan, sources: SourceSet, live: Mapping[str, Sequence[Mapping[str, Any]]],
                profile: Profile) -> tuple[BlockBaseline, ...]:
    """What a baseline records: per block of `plan`, each record matched to a live record (by id in
    `live`, the fetched collections) with its managed fields' live values."""
    desired = {(b.block, _hashable(r.key)): (b.mapping_file, r) for b in sources.blocks for r in b.records}
    by_id = {entity: {str(record.get("id")): record for record in records} for entity, records in live.items()}
    blocks = []
    for block in plan.blocks:
        mapping_file = next((b.mapping_file for b in sources.blocks if b.block == block.name), "")
        records, left_out = [], 0
        for planned in block.records:
            if planned.live_id is None:
                continue
            found = desired.get((block.name, _hashable(planned.key)))
            live_record = by_id.get(block.entity, {}).get(str(planned.live_id))
            if planned.blocked or planned.errors or found is None or live_record is None:
                left_out += 1
                continue
            owner = Owner(found[0] or mapping_file, block.name)
            records.append(_record(planned, found[1], live_record, owner, profile))
        blocks.append(BlockBaseline(block.name, mapping_file, block.entity, tuple(records), left_out))
    return tuple(blocks)


def _hashable(key: Sequence[Any]) -> tuple[Any, ...]:
    """A key as the plan shows it (references by their values), lists as tuples."""
    parts = (key_json(part) for part in key)
    return tuple(tuple(part) if isinstance(part, list) else part for part in parts)




def _record(planned: RecordPlan, desired: DesiredRecord, live: Mapping[str, Any], owner: Owner,
            profile: Profile) -> BaselineRecord:
    entity = profile.entity(planned.entity)
    set_fields = entity.set_fields
    marks = []
    for name in sorted(desired.fields):
        if name == CUSTOM:
            held = live.get(CUSTOM)
            labels: Mapping[str, Any] = held if isinstance(held, Mapping) else {}
            for label in sorted(desired.fields[CUSTOM] or {}):
                value = labels.get(label)
                marks.append(FieldWrite(label_field(label), owner, after=value, before=value))
            continue
        value = comparable(name, live.get(name), entity)
        marks.append(FieldWrite(name, owner, after=value, before=value, as_set=name in set_fields))
    assert planned.live_id is not None
    return BaselineRecord(planned.entity, tuple(planned.key), planned.live_id, tuple(marks), updated_stamp(live))


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
