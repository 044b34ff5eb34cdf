"""`loader revert [--apply ID]`: a plan that undoes one apply (default: the last), to review and apply.

The service has no delete and no undo, so a revert is a plan, never a button: made from the apply's
journal in the environment's history and the live records fetched now (`loader.plan.revert`),
shown, and written like any plan (`--out revert.json` for `loader apply --plan`, `--report`,
`--html`), bound to the journal by its fingerprint. Exit codes: 1 when the plan has errors, else 0.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from loader import event_loop
from loader.commands.formats import add_format_argument, add_review_arguments, review_outputs
from loader.errors import EXIT_ERROR, EXIT_OK

if TYPE_CHECKING:
    from loader.config import Config, Environment
    from loader.plan.model import Plan

REVIEW_OUTPUTS = ("out", "report", "html")  # loader.report.review_formats


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--apply", dest="apply_id", metavar="ID", help="the apply to undo (default: the last)")
    parser.add_argument("--env", metavar="NAME", help="environment of loader.yaml (default: its default, else sandbox)")
    add_review_arguments(parser, REVIEW_OUTPUTS, "revert")
    add_format_argument(parser)


@dataclass(frozen=True)
class RevertRequest:
    """What `loader revert` was asked, as plain values (usage already checked)."""

    apply_id: str | None
    env: str | None
    outputs: tuple[tuple[str, Path], ...]  # (review format, path) asked for: --out, --report, --html
    output: str = "text"  # --format

    @property
    def out(self) -> Path | None:
        """--out: the plan file to apply."""
        return dict(self.outputs).get("out")


def request_from(args: argparse.Namespace) -> RevertRequest:
    from loader.errors import UsageError

    if args.apply_id is not None and not args.apply_id.strip():
        raise UsageError("--apply names no apply", hint="give an apply's id, or leave --apply out for the last")
    return RevertRequest(apply_id=args.apply_id, env=args.env, outputs=review_outputs(args, REVIEW_OUTPUTS),
                         output=getattr(args, "format", "text"))


def run(request: RevertRequest, config: Config) -> int:
    from loader.environments import open_environment
    from loader.report.formats import print_plan_output
    from loader.report.terminal import render

    with open_environment(config, request.env) as env:
        plan = event_loop.run(make_revert(request, config, env))
    if request.output != "json":
        render(plan, applying=True)
        print(_next_step(request, plan))
    _write_artifacts(request, plan)
    code = EXIT_ERROR if plan.has_errors else EXIT_OK
    print_plan_output(request.output, plan, code)
    return code


def _next_step(request: RevertRequest, plan: Plan) -> str:
    """What to do with the plan: apply it after review, or nothing (only what to retire or check by hand)."""
    if not plan.has_changes:
        return "Nothing to put back through the service; what is listed above is for a person to handle."
    apply_with = request.out or Path("revert.json")
    written = "" if request.out else f" (write it with --out {apply_with})"
    return f"Review it, then apply it with `loader apply --plan {apply_with}`{written}."


async def make_revert(request: RevertRequest, config: Config, env: Environment) -> Plan:
    """The revert plan of the apply `request.apply_id` (default: the last) in `env`'s history."""
    from loader.api.client import ApiClient
    from loader.errors import ConfigError
    from loader.files.fingerprints import fingerprint_inputs
    from loader.history.journal_reading import part_paths
    from loader.history.opening import open_history
    from loader.history.store import DONE_SUFFIX, JOURNALS
    from loader.plan.diff import PlanHeader
    from loader.plan.revert import revert_plan
    from loader.plan.revert_writes import pick_journal, records_written

    history = open_history(config, env.name, ())
    if history is None:
        raise ConfigError("the history is off (`history: false` in loader.yaml): no apply was recorded, "
                          "so there is nothing to revert", hint="turn the history on before the applies to undo")
    folder = history.folder / JOURNALS
    journal = pick_journal(history.journals(), request.apply_id, str(folder), last=history.head.last_apply)
    parts = part_paths(folder / f"{journal.info.apply_id}{DONE_SUFFIX}")
    fingerprints = fingerprint_inputs(parts)
    touched = {writes.entity for writes in records_written(journal)}
    if journal.counts is None:  # interrupted: its unjournaled writes are looked for in what the history knows
        touched |= set(history.snapshot.entities())
    entities = sorted(touched)
    async with ApiClient(env, config.profile, concurrency=config.concurrency) as client:
        live = await client.fetch_collections(entities) if entities else {}
        header = PlanHeader(
            environment=client.environment or env.name, api_version=client.api_version, base_url=env.base_url,
            env_name=env.name, fingerprints=fingerprints,
            created_at=datetime.now(UTC).replace(microsecond=0).isoformat(),
        )
    return revert_plan(journal, live, config.profile, history, header, journal_file=next(iter(fingerprints)))


def _write_artifacts(request: RevertRequest, plan: Plan) -> None:
    from loader.report.review_formats import write_review_outputs

    write_review_outputs(plan, dict(request.outputs))
