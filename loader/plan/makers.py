"""The planner's fast makers of plan values: the very values of `loader.plan.model`, made for less.

A frozen dataclass's __init__ sets each field through object.__setattr__; the planner makes a
RecordPlan per desired record and a FieldChange per field it changes, so these set the slots
directly. tests/plan/test_plan_makers.py holds each equal to its constructor, on random values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from operator import attrgetter
from typing import Any

from loader.findings import Finding
from loader.places import CellRef
from loader.plan.model import Action, FieldChange, FieldOutcome, RecordPlan


def field_change(field: str, old: Any, new: Any, pii: bool = False) -> FieldChange:
    """FieldChange(field, old, new, pii), made the fast way (see `record_plan`)."""
    made = object.__new__(FieldChange)
    put_field, put_old, put_new, put_pii = _FIELD_CHANGE_SLOTS
    put_field(made, field)
    put_old(made, old)
    put_new(made, new)
    put_pii(made, pii)
    return made


_FIELD_CHANGE_SLOTS = tuple(FieldChange.__dict__[f.name].__set__ for f in fields(FieldChange))


def record_plan(
    ref: str, block: str, entity: str, key: tuple[Any, ...], action: Action, payload: Mapping[str, Any],
    source: CellRef, live_id: str | None, live_updated_time: int | None, changes: tuple[FieldChange, ...],
    status_path: tuple[str, ...], depends_on: tuple[str, ...], findings: tuple[Finding, ...], row: int | None,
    refers_to: tuple[str, ...], also_rows: tuple[tuple[str, int], ...], history_line: str | None = None,
    kept: tuple[FieldOutcome, ...] = (), conflicts: tuple[FieldOutcome, ...] = (), confirmed: tuple[str, ...] = (),
    written_after: tuple[tuple[str, str | tuple[str, ...]], ...] = (), /,
) -> RecordPlan:
    """RecordPlan(...) not yet blocked, made the fast way: the planner makes one per desired record.

    A frozen dataclass's __init__ sets each field through object.__setattr__ (here about 3.5 µs for
    RecordPlan's 22 fields); this sets its slots directly. The instance is the same;
    tests/plan/test_plan_makers.py holds it equal to the constructor. Slots, not a
    __dict__: a filled __dict__ took more than twice the memory.
    """
    made = object.__new__(RecordPlan)
    put = _RECORD_PLAN_SLOTS  # one setter per field, in field order (a loop over them cost 1.3 µs more)
    put[0](made, ref), put[1](made, block), put[2](made, entity), put[3](made, key), put[4](made, action)
    put[5](made, payload), put[6](made, source), put[7](made, live_id), put[8](made, live_updated_time)
    put[9](made, changes), put[10](made, status_path), put[11](made, depends_on), put[12](made, findings)
    put[13](made, False), put[14](made, row), put[15](made, refers_to), put[16](made, also_rows)
    put[17](made, history_line), put[18](made, kept), put[19](made, conflicts), put[20](made, confirmed)
    put[21](made, written_after)
    return made


_RECORD_PLAN_SLOTS = tuple(RecordPlan.__dict__[f.name].__set__ for f in fields(RecordPlan))


def record_plan_with(record: RecordPlan, **changes: Any) -> RecordPlan:
    """`dataclasses.replace(record, **changes)`, made the fast way (the three-way plan changes every
    record it compares; replace took 30 µs a record): every field read in one call, each slot set."""
    v: Any = _ALL_FIELDS(record)
    if changes:
        v = list(v)
        for name, value in changes.items():
            v[_FIELD_INDEX[name]] = value
    made = object.__new__(RecordPlan)
    put = _RECORD_PLAN_SLOTS
    put[0](made, v[0]), put[1](made, v[1]), put[2](made, v[2]), put[3](made, v[3]), put[4](made, v[4])
    put[5](made, v[5]), put[6](made, v[6]), put[7](made, v[7]), put[8](made, v[8]), put[9](made, v[9])
    put[10](made, v[10]), put[11](made, v[11]), put[12](made, v[12]), put[13](made, v[13])
    put[14](made, v[14]), put[15](made, v[15]), put[16](made, v[16]), put[17](made, v[17])
    put[18](made, v[18]), put[19](made, v[19]), put[20](made, v[20]), put[21](made, v[21])
    return made


_FIELD_NAMES = tuple(f.name for f in fields(RecordPlan))
_ALL_FIELDS = attrgetter(*_FIELD_NAMES)
_FIELD_INDEX = {name: at for at, name in enumerate(_FIELD_NAMES)}
assert len(_FIELD_NAMES) == 22, "record_plan and record_plan_with set RecordPlan's 22 fields one by one"
