"""What `loader apply` checks before its first write: the plan file, the inputs' fingerprints,
the target environment, errors in the plan, the `--max-changes` guard rail and `--expect-digest`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from loader.errors import PlanError, UsageError
from loader.files.fingerprints import fingerprint_file
from loader.plan.digest import plan_digest
from loader.plan.model import Plan
from loader.plan.plan_counts import changes_to_apply as changes_to_apply
from loader.plan.plan_counts import records_in_scope as records_in_scope
from loader.profile import Profile
from loader.source.readers import reads_files
from loader.words import plural


@dataclass(frozen=True)
class MaxChanges:
    """At most `count` records, or at most `percent` % of the records in scope."""

    count: int | None = None
    percent: float | None = None

    def limit(self, scope: int) -> int:
        if self.count is not None:
            return self.count
        assert self.percent is not None
        return math.floor(scope * self.percent / 100)

    def __str__(self) -> str:
        return f"{self.count}" if self.count is not None else f"{self.percent:g}%"


_MAX_CHANGES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$")


_MAX_CHANGES_CHARS = 20  # a count or a percentage: longer text is no number a guard rail needs


def parse_max_changes(text: str) -> MaxChanges:
    """`"50"` -> at most 50 records; `"10%"` -> at most 10 % of the records in scope."""
    match = _MAX_CHANGES.match(text) if len(text) <= _MAX_CHANGES_CHARS else None
    if not match:
        raise UsageError(f"--max-changes {text!r} is neither a number nor a percentage", hint="e.g. 200 or 10%")
    number, percent = match.groups()
    if percent:
        return MaxChanges(percent=float(number))
    if "." in number:
        raise UsageError(f"--max-changes {text!r}: a count must be a whole number")
    return MaxChanges(count=int(number))


def check_max_changes(plan: Plan, guard: MaxChanges | None, partial: bool) -> None:
    if guard is not None:
        check_change_count(changes_to_apply(plan, partial), records_in_scope(plan), guard)


def check_change_count(changes: int, scope: int, guard: MaxChanges) -> None:
    """`--max-changes`: `changes` records to write of `scope` in scope."""
    limit = guard.limit(scope)
    if changes > limit:
        raise PlanError(
            f"the plan changes {plural(changes, 'record')}, more than --max-changes {guard} allows "
            f"({limit} of {scope} in scope); nothing was applied",
            hint="review the plan (a renamed column can rewrite a whole collection), then raise --max-changes",
        )


def check_errors(plan: Plan, partial: bool) -> None:
    check_error_count(len(plan.errors()), partial)


def check_payloads(plan: Plan) -> None:
    """Every value the apply would send must be one JSON can carry: a NaN or an infinite number (a
    cell holding 1e999, a database's REAL) is refused, naming its record and field, before the
    first write rather than by the encoder in the middle of the apply."""
    for record in plan.records():
        for field, value in record.payload.items():
            if not _finite(value):
                raise PlanError(
                    f"{record.ref}: `{field}` is {value!r}, a number JSON cannot carry; nothing was applied",
                    where=str(record.source), hint="give the cell a finite number, or leave it empty",
                )


def _finite(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_finite(v) for v in value)
    return True


def check_error_count(errors: int, partial: bool) -> None:
    """Refuse a plan with `errors` errors, unless `--partial`."""
    if not errors or partial:
        return
    raise PlanError(
        f"the plan has {plural(errors, 'error')}; nothing was applied",
        hint="fix the errors, or pass --partial to apply everything they do not touch",
    )


def check_fingerprints(plan: Plan, base: Path | None = None) -> None:
    """Every input file the plan was made from must be unchanged (paths are relative to `base`)."""
    base = base or Path.cwd()
    if not plan.fingerprints:
        raise PlanError(
            "the plan names no input files, so it cannot be checked against them; nothing was applied",
            hint="make the plan with `loader plan ... --out plan.json`",
        )
    for name, expected in sorted(plan.fingerprints.items()):
        if not reads_files(name):  # the values a source gave: the plan holds its records
            continue
        path = Path(name) if Path(name).is_absolute() else base / name
        if not path.is_file():
            raise PlanError(
                f"input file {name} of the plan is missing",
                hint="run apply from the directory the plan was made in, or make a new plan",
            )
        if fingerprint_file(path) != expected:
            raise PlanError(
                f"input file {name} changed since the plan was made; nothing was applied",
                hint="run `loader plan` again and review the new plan",
            )


def check_profile(plan: Plan, profile: Profile) -> None:
    """The entity profile (packaged, with loader.yaml's `profile:` over it) must be the one planned with."""
    planned = plan.profile_fingerprint
    if planned and planned != profile.fingerprint:
        raise PlanError(
            "the entity profile changed since the plan was made (loader.yaml `profile:` or a loader upgrade); "
            "nothing was applied",
            hint="run `loader plan` again and review the new plan",
        )


def check_target(plan: Plan, env_name: str, reported: str | None) -> None:
    """The plan must be applied to the environment it was made for, by name and as reported."""
    if plan.env_name != env_name:
        raise PlanError(
            f"the plan was made for environment {plan.env_name!r}, not {env_name!r}; nothing was applied",
            hint=f"pass --env {plan.env_name}, or make a plan for {env_name}",
        )
    if reported is not None and reported != plan.environment:
        raise PlanError(
            f"the service reports environment {reported!r} but the plan was made against {plan.environment!r}; "
            "nothing was applied",
            hint="check base_url and expect_environment of this environment in loader.yaml",
        )




def check_digest(plan: Plan, expected: str | None) -> None:
    """With `--expect-digest`, the plan made now must be the plan that was reviewed, value for value."""
    if expected is None:
        return
    actual = plan_digest(plan)
    if actual != expected:
        raise PlanError(
            f"the plan's digest is {actual}, not the expected {expected}: the inputs or the service changed "
            "since the plan was reviewed; nothing was applied",
            hint="run `loader plan` again, review the new report, and apply with its digest",
        )


_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def parse_digest(text: str) -> str:
    """`--expect-digest sha256:<64 hex>` (as the report's header prints it)."""
    digest = text.strip().lower()
    if not _DIGEST.match(digest):
        raise UsageError(
            f"--expect-digest {text!r} is not a plan digest",
            hint="copy the `sha256:…` line (64 hex digits) from the plan report's header",
        )
    return digest
