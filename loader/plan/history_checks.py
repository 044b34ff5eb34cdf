"""Before a three-way plan: is the history the one of these live records, and is it up to date?
And after it: does each live record answer to one row of the sheet?

Two refusals of section 10, each saying what to do: "another database" (most ids the history
recorded are missing from a full fetch: a reset sandbox, a refreshed Test) and "the history is
behind" (a live record newer than its history line, last updated by one of the loader's own users:
an apply whose history was not committed). Writes of an apply that was interrupted, whose leftover
journal opening the history folded, are the loader's own: adopted, never a sign of a stale history.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from loader.findings import Finding
from loader.history.errors import AnotherDatabaseError, HistoryBehindError, HistoryError
from loader.history.interrupted import Interrupted
from loader.history.locking import being_written
from loader.history.store import History
from loader.live_records import updated_time, updated_user
from loader.plan.history_index import EntityIndex
from loader.plan.model import BlockPlan, RecordPlan
from loader.plan.three_way import history_is_behind, is_another_database
from loader.words import plural


def refuse_wrong_history(history: History, indexed: Mapping[str, EntityIndex],
                         service_user_ids: Iterable[str] = ()) -> None:
    """Raise when the history describes another database, or is behind the service, for the
    entities `indexed` (`loader.plan.history_index`: each fetched whole)."""
    entities = sorted(set(indexed) & set(history.snapshot.entities()))
    for entity in entities:
        index = indexed[entity]
        recorded, missing = len(index.line_keys), len(index.line_keys) - len(index.line_of)
        if is_another_database(recorded, missing):
            raise AnotherDatabaseError(
                f"the history describes another database: {missing} of the {recorded} {entity} records it "
                f"recorded are not live", where=str(history.folder),
                hint="if the environment was reset or refreshed, run `loader history reset` and plan again")
    own = history.own_users(service_user_ids)
    adopt_from = history.interrupted_applies
    for entity in entities:
        behind = _behind(indexed[entity], own, adopt_from)
        if behind and being_written(history.folder):  # its writes are not journaled yet, not lost
            raise HistoryError(
                "another apply is writing this history now", where=str(history.folder),
                hint="wait for it to finish and plan again: its writes are in the history when it ends")
        if behind:
            raise HistoryBehindError(
                f"the history is behind: {plural(behind, f'{entity} record')} "
                f"{'holds' if behind == 1 else 'hold'} writes of the loader that the history "
                f"does not know", where=str(history.folder),
                hint="fetch the latest history (git pull) and plan again; an apply's history must be committed")


def is_adopted(live_time: int | None, live_user: str | None, own: frozenset[str],
               windows: tuple[Interrupted, ...]) -> bool:
    """A write of the loader's own user made while an interrupted apply could write: that apply's."""
    return bool(windows) and live_time is not None and live_user in own and any(w.holds(live_time) for w in windows)


def _behind(index: EntityIndex, own: frozenset[str], adopt_from: tuple[Interrupted, ...]) -> int:
    count = 0
    if not own:
        return 0
    for live_id, key in index.line_of.items():
        rec = index.by_id[live_id]
        user = live_user(rec)
        if user not in own:
            continue
        time = updated_time(rec)
        line = index.line(key)
        assert line is not None
        if history_is_behind(line.updated_time, time, user, own) and not is_adopted(time, user, own, adopt_from):
            count += 1
    return count


def one_row_per_live_record(blocks: Sequence[BlockPlan]) -> list[BlockPlan]:
    """`blocks` with every record that resolves to the same live record as a row of another key
    made an error naming both rows, and blocked. A record re-keyed in the platform (K3 recoded K7)
    is found by the history's id for the row that still says K3, and by its key for a row K7 added
    since: writing either would update the other's record."""
    claims: dict[tuple[str, str], list[RecordPlan]] = {}
    for block in blocks:
        for record in block.records:
            if record.live_id:
                claims.setdefault((record.entity, record.live_id), []).append(record)
    shared = {id(record): [other for other in found if other.key != record.key]
              for found in claims.values() if len({r.key for r in found}) > 1 for record in found}
    if not shared:
        return list(blocks)
    return [replace(block, records=tuple(_one_of_two(r, shared.get(id(r), [])) for r in block.records))
            for block in blocks]


def _one_of_two(record: RecordPlan, others: Sequence[RecordPlan]) -> RecordPlan:
    if not others:
        return record
    names = ", ".join(f"{other.source} (key {'/'.join(map(str, other.key))})" for other in others)
    finding = Finding(
        "error", "one-live-record-two-rows",
        f"this row (key {'/'.join(map(str, record.key))}) and {names} resolve to one live {record.entity} "
        f"record ({record.live_id}): the history knows it by one key, live holds the other (re-keyed in the "
        "platform?); keep the row whose key the record has now and delete the other, or set the record's key "
        "back in the platform, then plan again", record.source, cause="two rows resolve to one live record",
        key="/".join(map(str, record.key)))
    return replace(record, findings=(*record.findings, finding), blocked=True)


def live_user(record: Mapping[str, Any]) -> str | None:
    """The id of the user who last updated a live record."""
    return updated_user(record)
