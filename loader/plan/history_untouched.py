"""Records untouched since their history line: planned from the line, without comparing each field.

A record whose live `metadata.updated` is the time its line holds has not changed since the loader
last wrote or saw it, so live is W for every field the line marks. When the sheet manages only
marked fields, such a record needs no field-by-field compare (`loader.plan.history_fields`):
- one the sheet leaves as it is is unchanged, with nothing to confirm;
- an update whose every field sent is a plain value (not a set-like list, not `custom_attributes`)
  that this block owns, whose W is live's digest, is the update drafted, each field's W once
  written computed (`three_way_record`'s "L = W, S != L: update"); a field holding an id this plan
  creates first is sent uncompared, as there.
Anything else is compared in full. `Untouched.record` takes the marks from a parsed line
(`parsed_marks`) or from a snapshot line's text, unparsed (`TextMarks`): most lines a plan
compares are never parsed.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from typing import Any

from loader.history.comparable import comparable
from loader.history.digests import RecordDigests, Written
from loader.history.lines import FieldMark
from loader.history.snapshot import Tables
from loader.live_records import updated_time
from loader.plan.makers import record_plan_with
from loader.plan.model import Action, PendingId, RecordPlan
from loader.profile import EntityProfile
from loader.record_fields import CUSTOM
from loader.source.equality import same
from loader.source.records import DesiredRecord

# A field's mark as the line holds it: (whether the record's block owns it, W); None: no mark.
MarkOf = Callable[[str], tuple[bool, Written] | None]


def all_marked(desired: DesiredRecord | None, marks: Container[str]) -> bool:
    """Whether every field the sheet manages on the record has a mark in its line (`marks`: the
    names of the fields marked), W to compare with."""
    if desired is None:
        return False
    for name, value in desired.fields.items():
        if name == CUSTOM:
            if isinstance(value, Mapping) and any(f"{CUSTOM}.{label}" not in marks for label in value):
                return False
        elif name not in marks:
            return False
    return True


class Untouched:
    """Plans records of one entity untouched since their lines (see the module)."""

    def __init__(self, entity: EntityProfile) -> None:
        self.entity = entity
        status = {entity.status.field} if entity.status is not None else set()
        # what an update does not compare (`history_fields._managed` leaves them out), or not as a plain value
        self._skip = (entity.read_only | entity.create_only | entity.immutable | entity.forbidden
                      | entity.set_fields | status | {CUSTOM})

    def record(self, plan: RecordPlan, live: Mapping[str, Any], desired: DesiredRecord, mark_of: MarkOf,
               digests: Callable[[], RecordDigests], history_line: Callable[[], str]) -> RecordPlan | None:
        """`plan`, drafted against `live` untouched since its line (`history_line()`: that line's
        digest) and with a mark for every field `desired` manages, as the three-way compare makes
        it; None when it needs the compare in full. `digests()`: the record's (made for an update)."""
        if plan.action is Action.UNCHANGED:
            return record_plan_with(plan, history_line=history_line())
        if plan.action is not Action.UPDATE:
            return None
        entity, skip, wanted = self.entity, self._skip, desired.fields
        written_after: list[tuple[str, str]] = []
        made: RecordDigests | None = None
        for name, value in plan.payload.items():
            if name in skip or name not in wanted:
                return None
            if pending(value):
                continue  # an id this plan creates first: written, not compared, its W made by apply
            mark = mark_of(name)
            if mark is None or not mark[0] or type(mark[1]) is not str:
                return None
            sheet = comparable(name, value, entity)
            live_value = comparable(name, live.get(name), entity)
            made = made or digests()
            if same(sheet, live_value) or made.value(name, live_value) != mark[1]:
                return None  # S = L after all, or a platform edit the time did not tell: compared in full
            written_after.append((name, made.value(name, sheet)))
        written_after.sort()
        changes = tuple(c for _, c in sorted({c.field: c for c in plan.changes}.items()))
        return record_plan_with(plan, changes=changes, history_line=history_line(),
                                written_after=tuple(written_after))


def parsed_marks(fields: Mapping[str, FieldMark], owns: Callable[[Any], bool]) -> MarkOf:
    """`MarkOf` over a parsed line's marks (`owns(owner)`: whether the record's block owns it)."""
    def mark_of(name: str) -> tuple[bool, Written] | None:
        mark = fields.get(name)
        return None if mark is None else (owns(mark.owner), mark.written)
    return mark_of


class TextMarks:
    """A snapshot line's text, split once (`parts`: `raw_line_digest` takes them): its id token,
    time and marks, unparsed."""

    __slots__ = ("_owned", "columns", "parts")

    def __init__(self, text: str, columns: Mapping[str, int], owned: Container[int]) -> None:
        """`columns`: each field's place in the split line (`line_columns`); `owned`: the indexes of
        the owners the record's block counts as its own."""
        self.parts = text.split("\t")
        self._owned = owned
        self.columns = columns

    @property
    def id_token(self) -> str:
        return self.parts[1]

    @property
    def time(self) -> int | None:
        time = self.parts[2]
        return int(time) if time else None

    def has(self, name: str) -> bool:
        at = self.columns.get(name)
        return at is not None and at < len(self.parts) and self.parts[at] != ""

    def __contains__(self, name: object) -> bool:  # a Container of the fields marked (`all_marked`)
        return isinstance(name, str) and self.has(name)

    def mark_of(self, name: str) -> tuple[bool, Written] | None:
        if not self.has(name):
            return None
        column = self.parts[self.columns[name]]
        dot = column.index(".")
        written = column[dot + 1:]
        owned = int(column[:dot]) in self._owned
        if written[:1] == "[":
            return owned, frozenset(written[1:].split(",")) - {""}
        return owned, written


def line_columns(tables: Tables) -> dict[str, int]:
    """Each field's place in a line of `tables`, split at tabs (after key, id, time and user)."""
    return {name: at for at, name in enumerate(tables.fields, start=4)}


def untouched_since(line_time: int | None, live: Mapping[str, Any]) -> bool:
    """Whether `live` is untouched since a line of `line_time` (its `metadata.updated` time)."""
    return line_time is not None and line_time == updated_time(live)


def pending(value: Any) -> bool:
    """Whether `value` holds an id known only once this plan creates its record."""
    if type(value) is str:
        return False
    if isinstance(value, PendingId):
        return True
    if isinstance(value, Mapping):
        return any(pending(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(pending(v) for v in value)
    return False
