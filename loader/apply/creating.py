"""Creating one record: POST, and a lost answer or a 409 resolved by looking the record up by key.

The create is re-sent only after a look-up under the key proved the record absent, so a lost
answer never makes a duplicate. When the look-up itself cannot be done, the record fails as
unknown (a re-run converges) rather than risk a second create. A record found after a lost answer
is adopted (and patched where it differs); each lost answer and each adoption is journaled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

from loader.api.errors import ApiError, Conflict, OutcomeUnknown
from loader.apply.failures import failure, status_of
from loader.apply.journaling import ApplyJournal
from loader.apply.payloads import filterable, lookup_key, matches_key, missing_changes
from loader.plan.model import RecordPlan
from loader.profile import EntityProfile


class WriteClient(Protocol):
    """What the executor, its creates and its updates need of `loader.api.client.ApiClient`."""

    async def create(self, entity: str, payload: Mapping[str, Any]) -> dict[str, Any]: ...
    async def update(self, entity: str, record_id: str, payload: Mapping[str, Any]) -> dict[str, Any]: ...
    async def get(self, entity: str, id_or_code: str) -> dict[str, Any] | None: ...
    async def fetch_collection(
        self, entity: str, filters: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]: ...


class Created(NamedTuple):
    """A record that exists now: its id, the writes sent for it, whether it was adopted (and after
    an answer of this apply was lost, rather than met by a 409), its status. (A named tuple: every
    create makes one.)"""

    id: str
    attempts: int
    adopted: bool
    live_status: str | None
    answer_lost: bool = False


class Creator:
    """Creates records through `client`; `key_fields` per block say how to look one up."""

    def __init__(self, client: WriteClient, key_fields: Mapping[str, tuple[str, ...]], max_attempts: int,
                 journal: ApplyJournal | None) -> None:
        self.client = client
        self.key_fields = key_fields
        self.max_attempts = max_attempts
        self.journal = journal

    async def create(self, record: RecordPlan, entity: EntityProfile, payload: dict[str, Any]) -> Created:
        """POST, resolving lost answers and conflicts by key."""
        attempts = 0
        last: ApiError | None = None
        last_unknown: OutcomeUnknown | None = None  # an earlier create of this run may have arrived
        while attempts < self.max_attempts:
            attempts += 1
            conflict: Conflict | None = None
            try:
                answer = await self.client.create(entity.name, payload)
                if answer.get("id"):
                    if self.journal is not None:
                        self.journal.written(record, str(answer["id"]), payload, answer, kind="create")
                    return Created(str(answer["id"]), attempts, False, status_of(answer, entity))
                # A success without an id (e.g. envelope names the profile gets wrong): find it by key.
                raise OutcomeUnknown(
                    "the service accepted the create but its answer holds no id",
                    method=entity.create.method if entity.create else "POST", path=entity.path,
                )
            except OutcomeUnknown as error:
                last = last_unknown = error
                if self.journal is not None:
                    self.journal.lost(record)
            except Conflict as error:
                last = conflict = error
            except ApiError as error:
                raise failure(error, attempts=attempts) from None
            key = lookup_key(payload, self.key_fields.get(record.block, entity.key), entity)  # once it is needed
            if key is None:
                raise failure(last, attempts=attempts, doing="creating (no key to look the record up by)")
            unexplained = conflict if last_unknown is None else None
            adopted = await self._adopt(record, entity, key, payload, attempts, unexplained)
            if adopted is not None:
                return adopted
            if conflict is not None:
                raise failure(conflict, attempts=attempts)
            if not any(name in payload for name in entity.unique):
                # Nothing the service keeps unique is sent: were the lost create still to commit
                # (late, on a slow service), a second one would be a duplicate it cannot refuse.
                raise failure(
                    last, attempts=attempts,
                    doing="creating: its answer was lost and it is not found under its key; not sent again, "
                    "since the service would not refuse a duplicate (run the apply again to converge)",
                )
            await asyncio.sleep(min(0.05 * 2**attempts, 2.0))
        assert last is not None
        raise failure(last, attempts=attempts, doing=f"creating, after {attempts} attempts")

    async def _adopt(
        self, record: RecordPlan, entity: EntityProfile, key: Mapping[str, Any], payload: dict[str, Any],
        attempts: int, unexplained: Conflict | None,
    ) -> Created | None:
        """After a lost answer or a 409: the record under `key`, adopted, or None if there is none.

        A record found after a lost answer is adopted and updated if it differs; one met by a 409
        that no lost create of this run explains (`unexplained`) is adopted only when it already
        equals the payload (re-applying a plan after an interruption), never changed: that would
        be a change the plan did not show.
        """
        try:  # the client already retries a GET on transient failures
            found = await self._lookup(entity, key)
        except ApiError as error:
            raise failure(error, attempts=attempts, doing="looking up a create whose answer was lost") from None
        if found is None:
            return None
        record_id = str(found["id"])
        patch = missing_changes(found, payload, entity)
        if patch and unexplained is not None:
            # The create met a record nobody in this run made: it appeared since the plan, and
            # changing it is a change the plan never showed.
            raise failure(
                unexplained, attempts=attempts,
                doing="creating: a record with this key was created since the plan, with other "
                "values; run `loader plan` again to see the update",
            )
        # Whose stamp it bears: this run's patch, or this run's lost create; not another's record.
        answer: Mapping[str, Any] | None = found if unexplained is None else None
        if patch:
            attempts += 1
            try:
                answer = await self.client.update(entity.name, record_id, patch)
            except ApiError as error:
                raise failure(error, attempts=attempts, record_id=record_id) from None
        if self.journal is not None:
            self.journal.written(record, record_id, payload, answer, kind="adopt")
        return Created(record_id, attempts, True, status_of(found, entity), answer_lost=unexplained is None)

    async def _lookup(self, entity: EntityProfile, key: Mapping[str, Any]) -> dict[str, Any] | None:
        if entity.get_by_code and tuple(key) == ("code",):
            found = await self.client.get(entity.name, str(key["code"]))
            return found if found is not None and matches_key(found, key) else None
        candidates = await self.client.fetch_collection(entity.name, filters=filterable(key))
        matches = [c for c in candidates if matches_key(c, key)]
        return matches[0] if matches else None
