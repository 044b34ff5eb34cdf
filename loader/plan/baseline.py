"""`loader history baseline`, the plan's side: which records and fields a baseline records.

Every record the plan matched to a live record gets W = live for every field its mapping manages
(each `custom_attributes` label on its own, set-like lists element by element), owned by its block
and mapping file. Records blocked by errors are left out, and counted. The history records the
result (`loader.history.baseline.record_baseline`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from loader.history.baseline import BaselineRecord, BlockBaseline
from loader.history.comparable import comparable
from loader.history.journal import FieldWrite
from loader.history.lines import Owner, label_field
from loader.live_records import updated_stamp
from loader.plan.model import Plan, RecordPlan
from loader.plan.record import key_json
from loader.profile import Profile
from loader.record_fields import CUSTOM
from loader.source.records import DesiredRecord
from loader.source.sources import SourceSet


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
