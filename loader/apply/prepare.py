"""What `loader apply` decides before its first write, so the command only wires values together.

A saved plan (`apply --plan plan.json`) is checked in two steps: `check_plan_file` before any
request (inputs' fingerprints, profile, errors, `--max-changes`, target environment by name), then
`prepare_saved_plan` against the service (the environment the service reports, learnt from one
page when no response has named it yet, then the stale records' check started, to run beside the
writes). A plan made now (`apply MAPPING...`) is
checked by `check_new_plan` (`--expect-digest`, errors, `--max-changes`).
"""

from __future__ import annotations

from typing import Protocol

from loader.apply.guards import (
    MaxChanges,
    changes_to_apply,
    check_digest,
    check_errors,
    check_fingerprints,
    check_max_changes,
    check_profile,
    check_target,
)
from loader.apply.stale import ListClient, StaleCheck, start_stale_check
from loader.plan.model import Plan
from loader.profile import Profile


class PrepareClient(ListClient, Protocol):
    async def probe_environment(self) -> str | None: ...


def check_plan_file(
    plan: Plan, profile: Profile, *, env_name: str | None, partial: bool, guard: MaxChanges | None
) -> str:
    """The checks of a saved plan that need no service; the name of the environment to apply it to
    (without `--env` the plan's own, recorded in it; a given one must match)."""
    check_fingerprints(plan)
    check_profile(plan, profile)
    check_errors(plan, partial)
    check_max_changes(plan, guard, partial)
    target = env_name or plan.env_name
    check_target(plan, target, None)
    return target


async def prepare_saved_plan(plan: Plan, client: PrepareClient, env_name: str) -> StaleCheck | None:
    """Once the service is known to be the environment the plan was made against, the check of the
    records it changed in the service since the plan, started: it runs while the apply writes the
    others (`ApplyOptions.stale`). None when the plan updates no live record."""
    check_target(plan, env_name, await client.probe_environment())
    return start_stale_check(plan, client)


def check_new_plan(plan: Plan, *, expected_digest: str | None, partial: bool, guard: MaxChanges | None) -> int:
    """The checks of a plan made now; the number of changes it would apply."""
    check_digest(plan, expected_digest)
    check_errors(plan, partial)
    check_max_changes(plan, guard, partial)
    return changes_to_apply(plan, partial)
