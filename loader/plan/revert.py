"""`loader revert`: the plan that undoes one apply, made from its journal and the live records.

Pure. Every field the apply changed goes back to its value before, where live still holds what the
apply wrote (its W); a field changed since by anyone is kept and said so. A status goes back only
along a legal path of the entity's transitions. Records the apply created (adopted lost creates
included) are listed for retirement by hand: the service has no delete. Entities with personal
fields keep no value before, so their fields are listed as not restorable. The result is an
ordinary `Plan` of updates (its `revert_of` names the apply), reviewed and applied like any other; its
apply is journaled like any, so reverting a revert puts back what the revert changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from loader.findings import Finding
from loader.history.comparable import comparable
from loader.history.digests import Digester, RecordDigests, Written, expand_id
from loader.history.journal import Journal
from loader.history.lines import line_digest
from loader.history.store import History
from loader.live_records import updated_time, updated_user
from loader.places import CellRef
from loader.plan.diff import PlanHeader
from loader.plan.digest import plan_digest
from loader.plan.model import Action, BlockPlan, FieldChange, FieldRule, Plan, RecordPlan
from loader.plan.renumber_history import renumbered_back
from loader.plan.revert_writes import FieldUndo, RecordWrites, records_written
from loader.profile import EntityProfile, Profile
from loader.record_fields import CUSTOM

LABEL_PREFIX = f"{CUSTOM}."
CREATED = "created by this apply: the service has no delete, retire by hand"
KEPT = "kept: changed since"
PERSONAL = "cannot restore: personal values are not kept"
LOST = "the answer to a write of this apply was lost: what it changed is not known, check it by hand"
GONE = "no longer in the service: nothing to put back"
UNJOURNALED = "written by this apply, not journaled: changed since? check by hand"


@dataclass
class _Undo:
    """One record's revert as it is worked out: the update and what is said about it."""

    payload: dict[str, Any] = field(default_factory=dict)
    changes: list[FieldChange] = field(default_factory=list)
    status_path: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)


def revert_plan(journal: Journal, live: Mapping[str, Sequence[Mapping[str, Any]]], profile: Profile,
                history: History, header: PlanHeader, *, journal_file: str) -> Plan:
    """The plan undoing `journal`'s apply, against `live` (entity -> its live records, fetched now).
    `history` gives the records' current lines (apply refuses the plan once another apply moved
    them) and the digests; `journal_file` names the journal in places and the blocks' source."""
    written = records_written(journal)
    keyed = {writes.entity for writes in written if writes.personal}
    digester = replace(history.digester, personal=history.digester.personal | keyed)
    by_id = {entity: _by_id(entity, records, digester if entity in keyed else None)
             for entity, records in live.items()}
    blocks: dict[tuple[str, str, str], tuple[list[RecordPlan], list[Finding]]] = {}
    for writes in written:
        records, findings = blocks.setdefault((writes.owner.block, writes.entity, writes.owner.file), ([], []))
        current = _live_record(writes, by_id.get(writes.entity, {}))
        shown = _shown(writes, current)
        record, notes = _revert_record(writes, current, profile.entity(writes.entity), digester, shown)
        if record is not None and current is not None and writes.formerly is not None:
            record, note = renumbered_back(record, writes.formerly, history, current, digester,
                                           profile.entity(writes.entity), live.get(writes.entity, ()))
            notes += [note] if note else []
        if record is not None:
            records.append(replace(record, source=CellRef(journal_file), history_line=_line(history, record)))
        findings += [Finding("warning", "revert", f"{shown}: {note}", CellRef(journal_file)) for note in notes]
    unjournaled = _unjournaled(journal, live, profile, history, written, CellRef(journal_file)) \
        if journal.counts is None else []
    plan_blocks = _block_plans(blocks, journal_file)
    plan = Plan(environment=header.environment, api_version=header.api_version, base_url=header.base_url,
                fingerprints=dict(header.fingerprints), blocks=plan_blocks, findings=(*header.findings, *unjournaled),
                created_at=header.created_at, env_name=header.env_name,
                profile_fingerprint=profile.fingerprint, revert_of=journal.info.apply_id)
    return replace(plan, digest=plan_digest(plan))


def _block_plans(blocks: Mapping[tuple[str, str, str], tuple[list[RecordPlan], list[Finding]]],
                 journal_file: str) -> tuple[BlockPlan, ...]:
    """The reverted records and findings of each (block, entity, mapping file) as its BlockPlan, in order."""
    return tuple(
        BlockPlan(name=block, entity=entity, source_file=journal_file, sheet=None,
                  records=tuple(sorted(records, key=lambda r: r.ref)), findings=tuple(findings),
                  field_rules=_rules(records), mapping_file=mapping_file or None)
        for (block, entity, mapping_file), (records, findings) in sorted(blocks.items()))


def _unjournaled(journal: Journal, live: Mapping[str, Sequence[Mapping[str, Any]]], profile: Profile,
                 history: History, written: Sequence[RecordWrites], where: CellRef) -> list[Finding]:
    """The live records an interrupted apply may have written without journaling them: last changed
    by the loader's own user while that apply could write (`loader.history.interrupted`), in a state
    the history does not know (its line has another update time), not named by its journal. What
    they held before is not known, so they are named for a person to check, at `where` (the journal)."""
    window = next((w for w in history.interrupted_applies if w.info.apply_id == journal.info.apply_id), None)
    if window is None:
        return []
    own = history.own_users()
    named = {expand_id(w.live_id) for w in written if w.live_id and not w.personal}
    found = []
    for entity, records in sorted(live.items()):
        personal = entity in history.digester.personal
        key_fields = profile.entity(entity).key
        for rec in records:
            time, live_id = updated_time(rec), str(rec.get("id"))
            if updated_user(rec) not in own or time is None or not window.holds(time) or live_id in named:
                continue
            line = history.line_by_id(entity, live_id)
            if line is None or line.updated_time != time:  # a write the history does not know
                key = "" if personal else " " + " / ".join(str(rec.get(name)) for name in key_fields)
                found.append(Finding("warning", "revert", f"{entity}{key} (id {live_id}): {UNJOURNALED}", where))
    return found


def _rules(records: Sequence[RecordPlan]) -> tuple[FieldRule, ...]:
    """What each field's changes are, for the reports' "changes by mapping line": back to before."""
    names = sorted({change.field for record in records for change in record.changes})
    return tuple(FieldRule(name, "", f"{name} ← its value before the apply") for name in names)


def _by_id(entity: str, records: Sequence[Mapping[str, Any]],
           keyed: Digester | None) -> dict[str, Mapping[str, Any]]:
    """The live records of `entity` by the token the journal names them by: the id itself, or for an
    entity with personal fields its keyed token (none can be found without the history's key)."""
    if keyed is None:
        return {str(r.get("id")): r for r in records}
    if keyed.data_key is None:
        return {}
    return {keyed.id_token(entity, str(r.get("id"))): r for r in records}


def _live_record(writes: RecordWrites, by_id: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The live record the journal names by its id token (None: gone, or not found)."""
    if writes.live_id is None:
        return None
    return by_id.get(writes.live_id if writes.personal else expand_id(writes.live_id))


def _shown(writes: RecordWrites, current: Mapping[str, Any] | None) -> str:
    """How a record is named in the plan: entity, key (not for a personal entity) and live id."""
    live_id = str(current["id"]) if current is not None and "id" in current else (
        None if writes.live_id is None or writes.personal else expand_id(writes.live_id))
    if writes.personal:  # its key is kept only as a keyed digest
        return f"{writes.entity} (id {live_id})" if live_id else f"{writes.entity} (personal, not found live)"
    key = " / ".join(str(k) for k in writes.key_values())
    return f"{writes.entity} {key}" + (f" (id {live_id})" if live_id else "")


def _revert_record(writes: RecordWrites, current: Mapping[str, Any] | None, entity: EntityProfile,
                   digester: Digester, shown: str) -> tuple[RecordPlan | None, list[str]]:
    """One record's update back to its values before (None when there is nothing to send), and notes."""
    if writes.created:
        return None, [CREATED]
    notes = [LOST] if writes.lost else []
    if not writes.fields:
        return None, notes
    if writes.personal:
        return None, [*notes, f"{', '.join(writes.fields)}: {PERSONAL}"]
    if current is None:
        return None, [*notes, GONE]
    key = writes.key_values()
    undo = _Undo(notes=notes)
    digests = digester.record(writes.entity, key)
    for name, mark in writes.fields.items():
        if entity.status is not None and name == entity.status.field:
            _status(undo, mark, current.get(name), digests, entity)
        elif name.startswith(LABEL_PREFIX):
            _label(undo, mark, current, digests)
        else:
            _field(undo, mark, current.get(name), digests, entity)
    if not undo.payload and not undo.status_path:
        return None, undo.notes
    block = writes.owner.block
    record = RecordPlan(
        ref=f"{block}/{'/'.join(str(k) for k in key)}", block=block, entity=writes.entity, key=key,
        action=Action.UPDATE if undo.payload else Action.UNCHANGED, payload=undo.payload,
        source=CellRef(""), live_id=str(current["id"]), live_updated_time=_updated_time(current),
        changes=tuple(undo.changes), status_path=undo.status_path)
    return record, undo.notes


def _field(undo: _Undo, mark: FieldUndo, live_value: Any, digests: RecordDigests, entity: EntityProfile) -> None:
    if not _holds(digests, mark.field, live_value, mark.written, entity):
        undo.notes.append(f"{mark.field}: {KEPT} (live: {_text(live_value)})")
        return
    if _same(digests, mark.field, live_value, mark.before, entity):
        return
    undo.payload[mark.field] = _wire(mark.field, mark.before, entity)
    undo.changes.append(FieldChange(mark.field, live_value, mark.before))


def _label(undo: _Undo, mark: FieldUndo, current: Mapping[str, Any], digests: RecordDigests) -> None:
    """A custom attribute's label: the update sends the live map with the label put back (PATCH
    replaces the whole map), without the label when it had no value before."""
    label = mark.field[len(LABEL_PREFIX):]
    labels = dict((undo.payload[CUSTOM] if CUSTOM in undo.payload else current.get(CUSTOM)) or {})
    live_value = labels.get(label)
    if digests.value(mark.field, live_value) != mark.written:
        undo.notes.append(f"{mark.field}: {KEPT} (live: {_text(live_value)})")
        return
    if digests.value(mark.field, mark.before) == mark.written:  # live holds W: the value before came back
        return
    if mark.before is None:
        labels.pop(label, None)
    else:
        labels[label] = mark.before
    undo.payload[CUSTOM] = labels
    undo.changes.append(FieldChange(mark.field, live_value, mark.before))


def _status(undo: _Undo, mark: FieldUndo, live_status: Any, digests: RecordDigests, entity: EntityProfile) -> None:
    """The status back along a legal path of the entity's transitions, one update a step."""
    assert entity.status is not None
    if not _holds(digests, mark.field, live_status, mark.written, entity):
        undo.notes.append(f"{mark.field}: {KEPT} (live: {_text(live_status)})")
        return
    if mark.before is None or live_status == mark.before:
        return
    path = entity.status.path(str(live_status), str(mark.before))
    if path is None:
        undo.notes.append(f"{mark.field}: cannot move back from {live_status} (to {mark.before}): no legal move")
        return
    undo.status_path = path
    undo.changes.append(FieldChange(mark.field, live_status, mark.before))


def _holds(digests: RecordDigests, name: str, live_value: Any, written: Written, entity: EntityProfile) -> bool:
    """Whether live still holds what the apply wrote: its W (a reference compared by its id too)."""
    as_set = not isinstance(written, str)
    forms = (live_value, comparable(name, live_value, entity)) if name in entity.references else (live_value,)
    return any(digests.written(name, form, as_set=as_set) == written for form in forms)


def _same(digests: RecordDigests, name: str, live_value: Any, before: Any, entity: EntityProfile) -> bool:
    as_set = name in entity.set_fields
    return (digests.written(name, comparable(name, live_value, entity), as_set=as_set)
            == digests.written(name, comparable(name, before, entity), as_set=as_set))


def _wire(name: str, value: Any, entity: EntityProfile) -> Any:
    """A value before in the form an update sends it: a reference in its profile's shape."""
    reference = entity.references.get(name)
    if reference is None or value is None:
        return value
    ids = comparable(name, value, entity)
    if reference.shape != "object_id":
        return ids
    return [{"id": i} for i in ids] if isinstance(ids, list) else {"id": ids}


def _updated_time(record: Mapping[str, Any]) -> int | None:
    time = updated_time(record)
    return time if isinstance(time, int) else None


def _line(history: History, record: RecordPlan) -> str:
    """The digest of the record's history line now, found as apply finds it (by id, else by key)."""
    line = history.line_by_id(record.entity, record.live_id) if record.live_id else None
    return line_digest(line if line is not None else history.line(record.entity, record.key))


def _text(value: Any) -> str:
    return "(none)" if value is None else repr(value) if isinstance(value, str) else str(value)

