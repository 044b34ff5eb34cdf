"""`apply --plan plan.json --check-sources`: read the plan's sources again, and refuse the plan
where a record it writes would now be different.

`apply --plan` writes the plan's own records without reading a query or a URL again (its
fingerprints are digests of the values read). A plan from a live source can wait for review while
the source moves on; with `--check-sources` the mapping files the plan was made of are read again,
and each record the plan creates or updates is compared with the record the sources give now: a
record no longer there, or a field the plan writes that the sources now give another value, refuses
the whole plan before any write. A reference is left to the record it names (that one is checked
too); a field the plan does not write (an unmapped column, a value unchanged since the last load)
never refuses it, nor does a record the plan leaves alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from loader.errors import PlanError
from loader.plan.feed_fetching import fetch_feed
from loader.plan.model import Action, Plan, RecordPlan
from loader.plan.record import key_json
from loader.profile import Profile
from loader.record_fields import CUSTOM
from loader.source.records import DesiredRecord, Ref
from loader.source.sources import read_sources
from loader.words import plural

SHOWN = 10  # differing records named in the refusal


def check_sources(plan: Plan, profile: Profile, base: Path | None = None) -> None:
    """Refuse `plan` (PlanError, nothing written) where the sources, read again now, would make a
    record it writes different. `base`: the folder the plan's mapping paths are relative to."""
    mappings = sorted({block.mapping_file for block in plan.blocks if block.mapping_file})
    if not mappings:
        raise PlanError("--check-sources: the plan names no mapping file to read its sources from",
                        hint="make the plan again with `loader plan MAPPING... --out plan.json`")
    folder = base or Path.cwd()
    read = read_sources([folder / name for name in mappings], profile, fetch=fetch_feed)
    if read.has_errors:
        raise PlanError("--check-sources: the plan's sources read with errors now; nothing was applied",
                        hint=f"run `loader validate --read-sources {' '.join(mappings)}` to see them")
    now = {(block.block, _key(record.key)): record for block in read.blocks for record in block.records}
    changed = [line for record in _written(plan) if (line := _difference(record, now)) is not None]
    if changed:
        more = f"\n  ... and {len(changed) - SHOWN} more" if len(changed) > SHOWN else ""
        raise PlanError(
            f"the sources changed since the plan was made: {plural(len(changed), 'record')} it writes would now be "
            "different; nothing was applied:\n  " + "\n  ".join(changed[:SHOWN]) + more,
            hint="run `loader plan` again and review the new plan",
        )


def _written(plan: Plan) -> list[RecordPlan]:
    return [record for block in plan.blocks for record in block.records
            if record.action in (Action.CREATE, Action.UPDATE) and not record.blocked and not record.errors]


def _difference(record: RecordPlan, now: Mapping[tuple[str, tuple[Any, ...]], DesiredRecord]) -> str | None:
    """What makes `record` differ from the sources now (its place and the fields), or None."""
    desired = now.get((record.block, _key(record.key)))
    where = f"{record.block} {'/'.join(map(str, record.key))} ({record.source})"
    if desired is None:
        return f"{where}: no longer in its source"
    fields = [name for name in _differing(record.payload, desired.fields)]
    return f"{where}: {', '.join(fields)}" if fields else None


def _differing(payload: Mapping[str, Any], fields: Mapping[str, Any]) -> list[str]:
    found: list[str] = []
    for name, value in payload.items():
        if name == CUSTOM and isinstance(value, Mapping):
            labels = fields.get(CUSTOM) or {}
            found += [f"{CUSTOM}.{label}" for label, text in value.items() if not _same(labels.get(label), text)]
        elif name in fields and not _is_reference(fields[name]) and not _same(fields[name], value):
            found.append(name)
        elif name not in fields:
            found.append(name)  # the plan writes a field the sources no longer give
    return found


def _key(key: Sequence[Any]) -> tuple[Any, ...]:
    """A key as the plan holds it (a reference by the values it names), hashable."""
    parts = (key_json(part) for part in key)
    return tuple(tuple(part) if isinstance(part, list) else part for part in parts)


def _is_reference(value: Any) -> bool:
    return isinstance(value, Ref) or (isinstance(value, tuple | list) and any(isinstance(v, Ref) for v in value))


def _same(now: Any, written: Any) -> bool:
    if isinstance(now, Sequence) and isinstance(written, Sequence) and not isinstance(now, str | bytes):
        return not isinstance(written, str | bytes) and list(now) == list(written)
    return bool(now == written)
