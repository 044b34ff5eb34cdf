"""Listed in full once, then counted: what plans showed of a record, remembered in its history line.

Kept platform edits, conflicts and dropped records are shown in full the first time; once an apply
of a plan that showed them has run, later plans count them instead (until they change). The
history remembers them in a pseudo-field of the record's line, `#shown`, whose W is a set of short
hashes, one per thing shown: `kept|<field>|<time of the live record's last update>`, the same for
`conflict`, and `dropped`. They hold no value (a field name and a time), so they need no key.

Apply journals them: for every `ShownMark` of `shown_marks(plan)`, a "confirm" entry of the
record with one field, `#shown`, owned by the mark's owner, `written` = the mark's hashes (no
`updated`, so the line's time stays the one the loader last saw).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from loader.history.lines import HistoryLine, Owner
from loader.plan.model import FieldOutcome, Plan, RecordPlan

SHOWN = "#shown"


@dataclass(frozen=True)
class ShownMark:
    """What apply journals so that the next plan counts, not lists, what this plan showed."""

    entity: str
    key: tuple[Any, ...]
    live_id: str
    owner: Owner
    written: frozenset[str]


def item(text: str) -> str:
    """The short hash that stands for one thing shown."""
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()[:6]).decode("ascii")


def outcome_item(kind: str, outcome: FieldOutcome) -> str:
    return item(f"{kind}|{outcome.field}|{outcome.changed_at}")


DROPPED = item("dropped")


def _shown(line: HistoryLine | None) -> frozenset[str]:
    mark = line.fields.get(SHOWN) if line is not None else None
    if mark is None:
        return frozenset()
    return mark.written if isinstance(mark.written, frozenset) else frozenset({mark.written})


def mark_seen(record: RecordPlan, line: HistoryLine | None) -> RecordPlan:
    """The record with its kept edits and conflicts marked `seen` where an apply showed them before."""
    shown = _shown(line)
    if not shown or not (record.kept or record.conflicts):
        return record
    kept = tuple(replace(o, seen=outcome_item("kept", o) in shown) for o in record.kept)
    conflicts = tuple(replace(o, seen=outcome_item("conflict", o) in shown) for o in record.conflicts)
    return replace(record, kept=kept, conflicts=conflicts)


def dropped_seen(line: HistoryLine) -> bool:
    """Whether an apply showed the record as dropped before."""
    return DROPPED in _shown(line)


def shown_marks(plan: Plan) -> Iterator[ShownMark]:
    """What apply journals for this plan's kept edits, conflicts and dropped records (see the module)."""
    for block in plan.blocks:
        owner = Owner(block.mapping_file or block.source_file, block.name)
        for record in block.records:
            if (record.kept or record.conflicts) and record.live_id is not None:
                items = {outcome_item("kept", o) for o in record.kept}
                items |= {outcome_item("conflict", o) for o in record.conflicts}
                yield ShownMark(record.entity, record.key, record.live_id, owner, frozenset(items))
        for dropped in block.dropped:
            yield ShownMark(block.entity, dropped.key, dropped.id, owner, frozenset({DROPPED}))
