"""Writing one record of the plan: its create or update, then its status steps, each journaled.

An update whose retries ran out on failures that may hide a committed write is looked up by id,
and done when the record holds it (loader.apply.confirm). Status paths (DRAFT -> READY -> ACTIVE)
are consecutive updates of a record after its create or update.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, fields
from typing import Any

from loader.api.errors import ApiError
from loader.apply.confirm import outcome_unknown, update_landed
from loader.apply.creating import Created, Creator, WriteClient
from loader.apply.failures import WriteFailure, failure, shown_message
from loader.apply.journaling import LABEL_PREFIX as LABEL
from loader.apply.journaling import ApplyJournal
from loader.apply.payloads import labels_over
from loader.apply.results import ANSWER_LOST_ADOPTED, Outcome, RecordResult
from loader.errors import LoaderError
from loader.plan.model import Action, RecordPlan
from loader.profile import EntityProfile
from loader.record_fields import CUSTOM


def result_of(record: RecordPlan, outcome: Outcome, **values: Any) -> RecordResult:
    """`RecordResult(ref=record.ref, ..., outcome=outcome, **values)`, made the fast way: a frozen
    dataclass's __init__ sets each of its sixteen fields through object.__setattr__, about as much
    CPU as the rest of the executor's own work for a write. `values` are RecordResult's fields."""
    made = object.__new__(RecordResult)
    state = made.__dict__
    state.update(_RESULT_DEFAULTS)
    state.update(ref=record.ref, block=record.block, entity=record.entity, key=record.key, outcome=outcome,
                 source=str(record.source), row=record.row)
    if values:
        if not values.keys() <= _RESULT_FIELDS:
            raise TypeError(f"RecordResult has no field {sorted(values.keys() - _RESULT_FIELDS)[0]!r}")
        state.update(values)
    return made


def written_result(record: RecordPlan, outcome: Outcome, record_id: str | None, sent: tuple[str, ...], attempts: int,
                   adopted: bool, reached: str | None, message: str | None) -> RecordResult:
    """`result_of(record, outcome, id=record_id, fields=sent, attempts=attempts, adopted=adopted,
    record_status=reached, message=message)`, the result of nearly every write, each field set
    by name (half the CPU of `result_of`'s keywords)."""
    made = object.__new__(RecordResult)
    state = made.__dict__
    state.update(_RESULT_DEFAULTS)
    state["ref"], state["block"], state["entity"], state["key"] = record.ref, record.block, record.entity, record.key
    state["outcome"], state["source"], state["row"], state["id"] = outcome, str(record.source), record.row, record_id
    state["fields"], state["attempts"], state["adopted"] = sent, attempts, adopted
    state["record_status"], state["message"] = reached, message
    return made


_RESULT_FIELDS = frozenset(f.name for f in fields(RecordResult))
_RESULT_DEFAULTS = {f.name: f.default for f in fields(RecordResult) if f.default is not MISSING}


class RecordWriter:
    """Writes records through `client`, telling `journal` (when there is a history) each answer."""

    def __init__(self, client: WriteClient, creator: Creator, journal: ApplyJournal | None) -> None:
        self.client = client
        self.creator = creator
        self.journal = journal

    async def write(self, record: RecordPlan, entity: EntityProfile, payload: dict[str, Any]) -> RecordResult:
        """Write one record (its payload already has the ids of the records it needs); its result.
        A result with an id means the record exists: its dependants can be written."""
        attempts = 0
        record_id: str | None = record.live_id
        created: Created | None = None
        try:
            if record.action is Action.CREATE:
                created = await self.creator.create(record, entity, payload)
                record_id, attempts = created.id, created.attempts
            elif record.action is Action.UPDATE and payload:
                if record_id is None:
                    raise WriteFailure("the plan gives no id for this update", status=None, attempts=0)
                if CUSTOM in payload:
                    payload = await self._labels_now(record, entity, record_id, payload, attempts)
                attempts += 1
                answer = await self._update(record, entity, record_id, payload, attempts=attempts)
                if self.journal is not None:
                    self.journal.written(record, record_id, payload, answer, kind="update")
            reached: str | None = None
            if record.status_path and entity.status is not None:  # no coroutine for the records without
                reached, steps = await self._status_steps(record, entity, record_id, created, attempts)
                attempts += steps
        except LoaderError as error:  # e.g. the profile cannot write this entity: this record fails, not the run
            return result_of(record, Outcome.FAILED, id=record_id, message=str(error), attempts=attempts)
        except WriteFailure as failed:
            # Created, then a later step failed: the id is kept so dependants can still use it.
            return result_of(record, Outcome.FAILED, id=failed.record_id or record_id, status=failed.status,
                             message=shown_message(failed, record), attempts=failed.attempts)
        sent = tuple(payload) + ((entity.status.field,) if entity.status and record.status_path else ())
        outcome = Outcome.CREATED if record.action is Action.CREATE else Outcome.UPDATED
        adopted = created is not None and created.adopted
        message = ANSWER_LOST_ADOPTED if created is not None and created.answer_lost else None
        return written_result(record, outcome, record_id, sent, attempts, adopted, reached, message)

    async def _status_steps(
        self, record: RecordPlan, entity: EntityProfile, record_id: str | None, created: Created | None,
        attempts: int,
    ) -> tuple[str | None, int]:
        """Send the status path one update at a time; returns (state reached, updates sent)."""
        rule = entity.status
        if not record.status_path or rule is None:
            return None, 0
        steps: tuple[str, ...] = record.status_path
        before = created.live_status if created is not None else None
        if created is not None and created.adopted and created.live_status is not None:
            # The adopted record may already be part-way (or all the way) along the path.
            path = rule.path(created.live_status, record.status_path[-1])
            steps = path if path is not None else record.status_path
        if before is None:
            before = next((c.old for c in record.changes if c.field == rule.field), None)
        sent = 0
        for state in steps:
            sent += 1
            answer = await self._update(
                record, entity, str(record_id), {rule.field: state},
                attempts=attempts + sent, failed_id=record_id, doing=f"setting {rule.field} to {state}",
            )
            if self.journal is not None:
                self.journal.status_step(record, str(record_id), state, before, answer)
            before = state
        return record.status_path[-1], sent

    async def _labels_now(self, record: RecordPlan, entity: EntityProfile, record_id: str,
                          payload: dict[str, Any], attempts: int) -> dict[str, Any]:
        """The payload's labels made over the record as it is now (one GET by id): the plan's label
        changes sent, a label added in the platform since the plan kept (`labels_over`)."""
        try:
            live = await self.client.get(entity.name, record_id)
        except ApiError as error:
            raise failure(error, attempts=attempts, record_id=record_id,
                          doing="reading its labels before the update") from None
        changed = [c.field[len(LABEL):] for c in record.changes if c.field.startswith(LABEL)]
        # a plan that names no label change (made by hand): each label it sends is one
        return labels_over(payload, changed or list(payload[CUSTOM] or ()), live)

    async def _update(
        self, record: RecordPlan, entity: EntityProfile, record_id: str, payload: Mapping[str, Any], *,
        attempts: int, failed_id: str | None = None, doing: str | None = None,
    ) -> Mapping[str, Any]:
        """PATCH `payload`; its answer. When its retries ran out on failures that may hide a committed
        write, the record is looked up by id, and the update is done if it holds every field as sent:
        the record read then is the answer (its `updated` stamp journaled, so the history is not
        left behind the write)."""
        try:
            return await self.client.update(entity.name, record_id, payload)
        except ApiError as error:
            if not outcome_unknown(error):
                raise failure(error, attempts=attempts, record_id=failed_id, doing=doing) from None
            landed = await update_landed(self.client.get, entity, record_id, payload)
            if landed is not None:
                return landed
            if self.journal is not None:
                self.journal.lost(record, record_id)
            raise failure(error, attempts=attempts, record_id=failed_id, doing=doing) from None
