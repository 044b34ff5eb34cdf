"""A block's changes grouped by the rule that made them, for a reviewer who cannot read every record.

Each changed field of a record is counted in exactly one group: the mapping line that sets the field
(`mappings/units.yaml:31  name ← column 'Unit Name'`), one group for updates of existing records and
one for creates; a change no mapping line made (the status steps the plan adds to reach a status)
has a named group of its own, so has a field the block takes over from another block
(`take_over: true`), and so has a field the block's mapping does not name (a record merged
from another block's rows, or a plan made before plans recorded their rules).

For creates each group also has a profile of its field (records with a value, empty, distinct
values, the longest), and every group a sample: the records with the smallest hash of their key,
so the sample of a group stays the same from one plan to the next while the group does.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterable
from dataclasses import dataclass

from loader.plan.history_fields import TAKEN_OVER
from loader.plan.masking import HIDDEN
from loader.plan.model import Action, BlockPlan, FieldRule, RecordPlan
from loader.report.view import cell_text, is_blocked, key_label

SAMPLE_SIZE = 10
STATUS_STEPS = "status steps"  # the field name a status path is counted under
TAKE_OVER_PREFIX = "taken over: "  # a field taken over from another block (`take_over: true`) is counted apart


@dataclass(frozen=True)
class FieldProfile:
    """What a create group's field holds across its records."""

    with_value: int
    empty: int
    distinct: int | None  # None: the field is personal data (its values are masked)
    longest: str  # the longest value as a report shows it ("" when masked or empty)


@dataclass(frozen=True)
class RuleGroup:
    """The records of one block one rule changed: `kind` is "update" (existing records) or "create"."""

    id: str  # unique in the plan: "<block>/<kind>/<place or name>/<field>"
    block: str
    kind: str
    field: str
    place: str  # "mappings/units.yaml:31"; "" for a group no mapping line made
    text: str  # "name ← column 'Unit Name'", or what made the change
    records: tuple[RecordPlan, ...]
    profile: FieldProfile | None = None  # creates only

    @property
    def label(self) -> str:
        return f"{self.place}  {self.text}" if self.place else self.text

    @property
    def verb(self) -> str:
        return "created" if self.kind == "create" else "changed"

    def sample(self, size: int = SAMPLE_SIZE) -> list[RecordPlan]:
        return sample(self.records, size)


def key_hash(record: RecordPlan) -> bytes:
    """A hash of the record's key that does not depend on where it stands in the sheet."""
    text = repr((record.block, key_label(record.key)))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()


def sample(records: Iterable[RecordPlan], size: int = SAMPLE_SIZE) -> list[RecordPlan]:
    """The `size` records with the smallest hash of their key, in that order."""
    return heapq.nsmallest(size, records, key=key_hash)


def is_existing_change(record: RecordPlan) -> bool:
    """An update of a live record, or a status move of one: what a reviewer reads before any create."""
    return record.action is not Action.CREATE and record.has_changes and not is_blocked(record)


def is_create(record: RecordPlan) -> bool:
    return record.action is Action.CREATE and not is_blocked(record)


def rule_groups(block: BlockPlan, *, profiles: bool = True) -> list[RuleGroup]:
    """The block's groups: those of updates first, then those of creates, each in mapping order."""
    rules = {r.field: r for r in block.field_rules}
    order = {r.field: n for n, r in enumerate(block.field_rules)}
    alike: dict[tuple[str, tuple[str, ...]], list[RecordPlan]] = {}  # records that change the same fields
    for record in block.records:
        if is_existing_change(record):
            kind = "update"
        elif is_create(record):
            kind = "create"
        else:
            continue
        fields = tuple(c.field for c in record.changes)
        if record.findings and kind == "update":
            fields = _with_take_overs(record, fields)
        if record.status_path and "status" not in fields:
            fields += (STATUS_STEPS,)
        alike.setdefault((kind, fields or ("(no field)",)), []).append(record)
    members: dict[tuple[str, str], list[RecordPlan]] = {}
    for (kind, fields), records in alike.items():
        for name in fields:
            members.setdefault((kind, name), []).extend(records)
    made = sum(len(records) for (kind, _), records in alike.items() if kind == "create")
    groups = [_group(block, kind, name, records, rules.get(name), made if profiles else None)
              for (kind, name), records in members.items()]
    return sorted(groups, key=lambda g: (g.kind != "update", order.get(g.field, len(order)), g.field))


def _group(block: BlockPlan, kind: str, name: str, records: list[RecordPlan], rule: FieldRule | None,
           made: int | None) -> RuleGroup:
    """The group of one field's changes; `made`: the block's creates, to profile a create group over."""
    if rule is not None:
        place, text = rule.place, rule.text
    elif name == STATUS_STEPS:
        place, text = "", "status steps the plan adds to reach the status (no mapping line)"
    elif name.startswith(TAKE_OVER_PREFIX):
        field = name.removeprefix(TAKE_OVER_PREFIX)
        taken = next((r for r in block.field_rules if r.field == field), None)
        place = taken.place if taken is not None else ""
        text = f"{field} taken over from the block that owned it (take_over: true)"
    else:
        place, text = "", f"{name} (no mapping line recorded)"
    profile = _profile(name, records, made) if made is not None and kind == "create" and name != STATUS_STEPS else None
    return RuleGroup(f"{block.name}/{kind}/{place or '-'}/{name}", block.name, kind, name, place, text,
                     tuple(records), profile)


def _with_take_overs(record: RecordPlan, fields: tuple[str, ...]) -> tuple[str, ...]:
    """The fields a record changes, those its block takes over from another block under a group of their own."""
    taken = {f.message.split(": ", 1)[0] for f in record.findings if f.code == TAKEN_OVER}
    return tuple(TAKE_OVER_PREFIX + name if name in taken else name for name in fields) if taken else fields


def _profile(name: str, records: list[RecordPlan], made: int) -> FieldProfile:
    """The field over the block's `made` creates: those that do not set it count as empty."""
    with_value = 0
    masked = False
    distinct: set[str] = set()
    longest = ""
    for record in records:
        for change in record.changes:
            if change.field != name:
                continue
            if change.pii or change.new == HIDDEN:
                masked = True
            if change.new in (None, "", [], ()):
                continue
            with_value += 1
            text = cell_text(change.new)
            distinct.add(text)
            if len(text) > len(longest) or (len(text) == len(longest) and text < longest):
                longest = text
    return FieldProfile(with_value, made - with_value, None if masked else len(distinct),
                        "" if masked else longest)
