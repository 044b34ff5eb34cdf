"""A record that could not be written, and the message its result shows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loader.api.errors import ApiError, HttpError
from loader.plan.model import RecordPlan
from loader.profile import EntityProfile

CONFLICT_HIDDEN = (
    "the service refused it: a record with this key or a unique value already exists (HTTP 409); its message "
    "is hidden because this record's fields are personal data and it may name another person"
)


class WriteFailure(Exception):
    """A record could not be written; carries what the results need."""

    def __init__(self, message: str, *, status: int | None, attempts: int, record_id: str | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.attempts = attempts
        self.record_id = record_id


def failure(error: ApiError, *, attempts: int, record_id: str | None = None, doing: str | None = None) -> WriteFailure:
    """A WriteFailure from an API error; `attempts` counts the writes sent, the failing one included."""
    message = error.service_message if isinstance(error, HttpError) else error.message
    if doing:
        message = f"{doing}: {message}"
    status = error.status if isinstance(error, HttpError) else None
    return WriteFailure(message, status=status, attempts=attempts, record_id=record_id)


def shown_message(failed: WriteFailure, record: RecordPlan) -> str:
    """The failure's message, unless it is a 409 about a record holding PII: the service's message
    names the existing record (a person, for applicants), so it is not repeated into results."""
    if failed.status == 409 and any(change.pii for change in record.changes):
        return CONFLICT_HIDDEN
    return failed.message


def status_of(record: Mapping[str, Any], entity: EntityProfile) -> str | None:
    """The status a live record is in (the initial one when it names none)."""
    if entity.status is None:
        return None
    value = record.get(entity.status.field)
    return str(value) if value is not None else entity.status.initial
