"""What apply tells the history as each answer arrives: one journal entry per write, at once.

The executor calls an `ApplyJournal` after each create, update, status step, adoption and lost
answer; each call appends one line to the apply's journal (`loader.history.journal`), which is
written unbuffered, so an apply killed at any moment keeps every write it had journaled. Per
written field: the owner (the record's mapping file and block), the value before (the plan's
`old`; the Digester keeps only a digest of it for personal entities) and W, the digest of what
was sent, unless the plan computed W (`RecordPlan.written_after`: a set-like list keeping a
platform's element edits, and the fields it confirmed equal, whose value apply does not have).
The `updated` stamp of each answer teaches the history the loader's own service user.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from loader.history.comparable import comparable
from loader.history.digests import Written
from loader.history.journal import FieldValues, FieldWrite, JournalWriter
from loader.history.journal_text import NO_VALUE
from loader.history.lines import Edited, Owner
from loader.history.store import History
from loader.live_records import updated_stamp
from loader.plan.model import BlockPlan, Plan, RecordPlan
from loader.profile import EntityProfile, Profile
from loader.record_fields import CUSTOM

LABEL_PREFIX = f"{CUSTOM}."


def planned_written(record: RecordPlan) -> dict[str, Written]:
    """W once the plan is carried out, per field the plan computed it for (fields written and
    confirmed; a set-like list as its element digests, keeping a platform's element edits)."""
    pairs: Iterable[tuple[str, Any]] = getattr(record, "written_after", ())
    if not pairs:
        return {}
    return {name: w if isinstance(w, str) else frozenset(w) for name, w in pairs}


class ApplyJournal:
    """One apply's journal, fed by the executor. Each method appends one entry at once."""

    def __init__(self, writer: JournalWriter, plan: Plan, profile: Profile) -> None:
        self.writer = writer
        self.profile = profile
        self._owners = {block.name: Owner(_mapping_file(block), block.name) for block in plan.blocks}
        self._entities: dict[str, EntityProfile] = {}
        self._labels: dict[str, str | None] = {}  # per field name, the label it names (None: not a label)

    def _entity(self, name: str) -> EntityProfile:
        entity = self._entities[name] = self.profile.entity(name)
        return entity

    def written(self, record: RecordPlan, record_id: str, payload: Mapping[str, Any],
                answer: Mapping[str, Any] | None, *, kind: str) -> None:
        """A create, an update or an adoption: every field of `record.changes` the payload sent."""
        entity = self._entities.get(record.entity) or self._entity(record.entity)
        fields = self._fields(record, entity, payload)
        self.writer.record(kind, record.entity, record.key, record_id, fields, updated=updated_stamp(answer),
                           formerly=record.renamed_from)

    def status_step(self, record: RecordPlan, record_id: str, state: str, before: Any,
                    answer: Mapping[str, Any] | None) -> None:
        """One step of a status path (an update of the status field alone)."""
        entity = self.profile.entity(record.entity)
        assert entity.status is not None
        name = entity.status.field
        mark = FieldWrite(name, self._owner(record), after=state, before=before)
        self.writer.record("update", record.entity, record.key, record_id, [mark], updated=updated_stamp(answer),
                           formerly=record.renamed_from)

    def lost(self, record: RecordPlan, record_id: str | None = None) -> None:
        """A write sent whose answer was lost: it may or may not have landed."""
        self.writer.record("lost", record.entity, record.key, record_id or record.live_id)

    def confirmed(self, record: RecordPlan, record_id: str | None) -> None:
        """The fields the plan found equal to the sheet: their W moves to live (no write); and the
        fields it found changed in the platform, with who changed them and when (noted on the line
        the first time). Recorded in any apply, one that writes nothing included (the head moves
        only with a write): a platform edit the sheet caught up with is no longer one."""
        known_id = record_id or record.live_id
        if known_id is None:
            return
        marks = list(self._confirmations(record)) if record.confirmed else []
        if marks:
            self.writer.record("confirm", record.entity, record.key, known_id, marks)
        edits = platform_edits(record)
        if edits:
            self.writer.edited(record.entity, record.key, known_id, edits)

    def _owner(self, record: RecordPlan) -> Owner:
        return self._owners.get(record.block) or Owner("", record.block)

    def _fields(self, record: RecordPlan, entity: EntityProfile, payload: Mapping[str, Any]) -> list[FieldValues]:
        owner = self._owner(record)
        planned = planned_written(record) if getattr(record, "written_after", None) else None
        set_fields, references, labels = entity.set_fields, entity.references, self._labels
        sent_labels = payload.get(CUSTOM)
        fields: list[FieldValues] = []
        for change in record.changes:
            name = change.field
            label = labels[name] if name in labels else self._label(name)
            if label is None:
                if name not in payload:  # the status moved by its own steps, or a field this write did not carry
                    continue
                value = payload[name]
            elif type(sent_labels) is dict or isinstance(sent_labels, Mapping):
                value = sent_labels.get(label)
            else:
                continue
            if name in references:
                value = comparable(name, value, entity)  # a reference by its id, as the plan digests live
            fields.append((name, owner, value, change.old, name in set_fields, planned.get(name) if planned else None))
        return fields

    def _label(self, name: str) -> str | None:
        label = self._labels[name] = name[len(LABEL_PREFIX):] if name.startswith(LABEL_PREFIX) else None
        return label

    def _confirmations(self, record: RecordPlan) -> Iterable[FieldWrite]:
        owner = self._owner(record)
        planned = planned_written(record)
        values = dict(record.confirmed_values)
        for name in record.confirmed:
            if name in planned:  # W is the live value's digest, computed by the plan with the value
                yield FieldWrite(name, owner, after=values.get(name, NO_VALUE), written=planned[name])


def journal_confirmations(plan: Plan, profile: Profile, history: History, environment: str,
                          by: str | None) -> int:
    """A plan with nothing to write whose fields the sheet and the platform now agree on: their W
    moves to live, in a journal of its own that moves no head (nothing was written). How many
    records it confirmed (0: no journal at all)."""
    confirming = [r for r in plan.records() if (r.confirmed or platform_edits(r)) and not r.blocked and r.live_id]
    if not confirming:
        return 0
    writer = history.begin_apply(environment, plan_digest=plan.digest, by=by)
    journal = ApplyJournal(writer, plan, profile)
    for record in confirming:
        journal.confirmed(record, record.live_id)
    history.finish_apply(writer, {"confirmed": len(confirming)})
    return len(confirming)


def platform_edits(record: RecordPlan) -> dict[str, Edited]:
    """Per field the plan found changed in the platform (kept or in conflict), who changed it and
    when, as the live record's `metadata.updated` said (fields without a time are left out)."""
    return {found.field: (found.changed_at, found.changed_by) for found in (*record.kept, *record.conflicts)
            if found.changed_at is not None}


def _mapping_file(block: BlockPlan) -> str:
    """The mapping file of a block as the plan names it ("" in plans made before it did)."""
    return block.mapping_file or ""
