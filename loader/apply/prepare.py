"""What `loader apply` decides before its first write, so the command only wires values together.

A saved plan (`apply --plan plan.json`) is checked in two steps: `check_plan_file` before any
request (inputs' fingerprints, profile, errors, `--max-changes`, target environment by name), then
`prepare_saved_plan` against the service (the environment the service reports, learnt from one
page when no response has named it yet, then the stale records' check started, to run beside the
writes). A sealed plan (`loader.plan.plan_stream`) is checked by its head and its seal's counts,
and its records are read while the apply writes (`PlanReading`), unless the environment keeps a
history, whose lines are checked against every record before the first write (`saved_plan`).
A plan made now (`apply MAPPING...`) is checked by `check_new_plan` (`--expect-digest`, errors,
`--max-changes`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Protocol

from loader.apply.guards import (
    MaxChanges,
    changes_to_apply,
    check_change_count,
    check_digest,
    check_error_count,
    check_errors,
    check_fingerprints,
    check_max_changes,
    check_payloads,
    check_profile,
    check_target,
)
from loader.apply.history_checks import personal_entities_of_plan
from loader.apply.stale import ListClient, StaleCheck, start_stale_check, start_stale_check_later
from loader.history.store import History
from loader.plan.model import Plan, RecordPlan
from loader.plan.plan_stream import SealedPlan
from loader.profile import Profile


class PrepareClient(ListClient, Protocol):
    async def probe_environment(self) -> str | None: ...


class PlanReading:
    """A sealed plan's records as its apply reads them: `batches` (`ApplyOptions.more`) makes them
    a batch at a time, giving the loop a turn after each; `read` is the whole plan once they are."""

    def __init__(self, sealed: SealedPlan) -> None:
        self.sealed = sealed
        self.read: asyncio.Future[Plan] = asyncio.get_running_loop().create_future()

    @property
    def totals(self) -> dict[str, int]:
        """Records per block."""
        return {block.name: n for block, n in zip(self.sealed.head.blocks, self.sealed.counts.block_records,
                                                   strict=True)}

    async def batches(self) -> AsyncIterator[list[RecordPlan]]:
        try:
            for batch in self.sealed.batches():
                yield batch
                await asyncio.sleep(0)
            self.read.set_result(self.sealed.plan)
        except Exception as error:
            self.read.set_exception(error)
            raise
        finally:
            if not self.read.done():  # closed before its end: nobody waits for the plan any more
                self.read.cancel()


def check_plan_file(
    saved: Plan | SealedPlan, profile: Profile, *, env_name: str | None, partial: bool, guard: MaxChanges | None
) -> str:
    """The checks of a saved plan that need no service; the name of the environment to apply it to
    (without `--env` the plan's own, recorded in it; a given one must match). A sealed plan is
    checked by its head and its seal's counts."""
    plan = saved.head if isinstance(saved, SealedPlan) else saved
    check_fingerprints(plan)
    check_profile(plan, profile)
    if isinstance(saved, SealedPlan):
        counts = saved.counts
        check_error_count(len(plan.errors()) + counts.record_errors, partial)
        if guard is not None:
            check_change_count(counts.changes_partial if partial else counts.changes, counts.scope, guard)
    else:
        check_errors(plan, partial)
        check_payloads(plan)
        check_max_changes(plan, guard, partial)
    target = env_name or plan.env_name
    check_target(plan, target, None)
    return target


def saved_personal_entities(saved: Plan | SealedPlan, profile: Profile) -> frozenset[str]:
    """The personal entities of a saved plan (`personal_entities_of_plan`; a sealed one's changes by its seal)."""
    if isinstance(saved, SealedPlan):
        return personal_entities_of_plan(saved.head, profile) | frozenset(saved.counts.personal)
    return personal_entities_of_plan(saved, profile)


def saved_plan(saved: Plan | SealedPlan, history: History | None) -> tuple[Plan, PlanReading | None]:
    """The plan to apply and, for a sealed plan, the reading of its records beside the writes (the
    plan then is its head). With a history that changed since the plan was made (`History.state`),
    a sealed plan's records are all read first: the history lines of every record are checked
    before the first write. With one unchanged since (or not started then, nor now), no line can
    have moved."""
    if not isinstance(saved, SealedPlan):
        return saved, None
    if history is not None and saved.head.history_state != (history.state() if history.started else None):
        return saved.whole(), None
    return saved.head, PlanReading(saved)


async def prepare_saved_plan(plan: Plan, client: PrepareClient, env_name: str,
                             reading: PlanReading | None = None) -> StaleCheck | None:
    """Once the service is known to be the environment the plan was made against, the check of the
    records it changed in the service since the plan, started: it runs while the apply writes the
    others (`ApplyOptions.stale`). None when the plan updates no live record. With a `reading`,
    the check waits for the plan's records to be read."""
    check_target(plan, env_name, await client.probe_environment())
    if reading is not None:
        return start_stale_check_later(reading.read, client)
    return start_stale_check(plan, client)


def check_new_plan(plan: Plan, *, expected_digest: str | None, partial: bool, guard: MaxChanges | None) -> int:
    """The checks of a plan made now; the number of changes it would apply."""
    check_digest(plan, expected_digest)
    check_errors(plan, partial)
    check_payloads(plan)
    check_max_changes(plan, guard, partial)
    return changes_to_apply(plan, partial)
