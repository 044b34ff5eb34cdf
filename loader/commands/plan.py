"""`loader plan MAPPING...`: read the inputs, fetch live data, show what would change.

`--select BLOCK` (repeatable) plans those blocks alone (`loader.source.block_selection`).

Writes the requested artifacts: `--out plan.json` (for `apply --plan`; mode 0600), `--report
plan.md` (Markdown, deterministic, split into parts when long), `--html plan.html`.
Exit codes: 1 when the plan has errors; with `--detailed-exitcode`, 2 when there are changes or a
row waits for a person (a held conflict, a probable duplicate: `loader.report.held`) and 0 when there
are none; otherwise 0.
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from loader import event_loop
from loader.commands.formats import add_format_argument, add_review_arguments, review_outputs
from loader.commands.selection import add_select_argument, select_words, selected
from loader.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK, UsageError
from loader.project import mappings_given_or_project

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from loader.config import Config, Environment
    from loader.history.digests import Digester
    from loader.history.store import History
    from loader.plan.model import Plan
    from loader.plan.run import PlanRun
    from loader.source.readers import Source

log = logging.getLogger("loader.plan")
REVIEW_OUTPUTS = ("out", "report", "html", "review")  # loader.report.review_formats


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "mappings", nargs="*", metavar="MAPPING",
        help="mapping files (YAML), planned together (default: the project's, mappings/**/*.yaml)",
    )
    parser.add_argument("--env", metavar="NAME", help="environment of loader.yaml (default: its default, else sandbox)")
    add_select_argument(parser)
    add_review_arguments(parser, REVIEW_OUTPUTS, "plan")
    parser.add_argument(
        "--detailed-exitcode", action="store_true",
        help="exit 2 when there are changes or held conflicts, 0 when none, 1 on errors",
    )
    parser.add_argument("--concurrency", type=int, default=None, metavar="N", help="requests in flight (default 8)")
    add_format_argument(parser)


@dataclass(frozen=True)
class PlanRequest:
    """What `loader plan` was asked, as plain values (usage already checked)."""

    mappings: tuple[Path, ...]
    env: str | None
    outputs: tuple[tuple[str, Path], ...]  # (review format, path) asked for: --out, --report, --html, --review
    detailed_exitcode: bool
    concurrency: int | None
    output: str = "text"  # --format
    select: tuple[str, ...] = ()  # --select: the blocks planned (none: every block)


def request_from(args: argparse.Namespace) -> PlanRequest:
    from loader.config import MAX_CONCURRENCY

    if args.concurrency is not None and not 1 <= args.concurrency <= MAX_CONCURRENCY:
        raise UsageError(f"--concurrency {args.concurrency}: use a number from 1 to {MAX_CONCURRENCY}")
    return PlanRequest(
        mappings=mappings_given_or_project(args.mappings, getattr(args, "config", None)),
        env=args.env,
        outputs=review_outputs(args, REVIEW_OUTPUTS),  # checked before reading and fetching
        detailed_exitcode=args.detailed_exitcode,
        concurrency=args.concurrency,
        output=getattr(args, "format", "text"),
        select=selected(args),
    )


def run(request: PlanRequest, config: Config) -> int:
    from loader.environments import open_environment
    from loader.report.formats import print_plan_output
    from loader.report.terminal import render

    opened: list[History | None] = []  # the history the plan was made against, for the review workbook
    with open_environment(config, request.env) as env:
        plan_run = event_loop.run(_plan(request, config, env, opened))
    plan = plan_run.plan
    output = request.output
    if output != "json":
        render(plan, apply_command=["loader", "apply", *map(str, request.mappings), *select_words(request.select),
                                    "--env", plan.env_name])
    log.info(
        "read %.2f s, fetched %.2f s (%s live records), diffed %.2f s; requests %s",
        plan_run.reading_s, plan_run.fetching_s, sum(plan_run.live_counts.values()), plan_run.diffing_s,
        dict(plan_run.request_counts),
    )
    _write_artifacts(request, plan, next((h.digester for h in opened if h is not None), None))
    code = _exit_code(request, plan)
    print_plan_output(output, plan, code)
    return code


def _exit_code(request: PlanRequest, plan: Plan) -> int:
    """1 on errors; with --detailed-exitcode 2 while there are changes or a held row waits for a person."""
    from loader.report.held import waits_for_a_person

    if plan.has_errors:
        return EXIT_ERROR
    if request.detailed_exitcode and (plan.has_changes or waits_for_a_person(plan)):
        return EXIT_CHANGES
    return EXIT_OK


async def _plan(request: PlanRequest, config: Config, env: Environment, opened: list[History | None]) -> PlanRun:
    return await plan_project(list(request.mappings), config, env, opened, concurrency=request.concurrency,
                              progress=False if request.output == "json" else None, select=request.select)


async def plan_project(mappings: list[Path], config: Config, env: Environment, opened: list[History | None], *,
                       concurrency: int | None = None, progress: bool | None = None,
                       given: Mapping[str, Source] | None = None, select: Sequence[str] = ()) -> PlanRun:
    """The plan of `mappings` against `env`, as `loader plan` makes it (the history it opens put in
    `opened`, the project's decisions honoured as of today); the Python API's plan too, with the
    sources `given` in place of named ones; `select`: the blocks planned (none: all). The plan alone is
    kept (no records of the sources)."""
    from datetime import date

    from loader.api.client import ApiClient
    from loader.history.decisions import decisions_path, read_decisions
    from loader.history.opening import open_history
    from loader.plan.run import run_plan

    def opener(personal: frozenset[str]) -> History | None:
        history = open_history(config, env.name, personal)
        opened.append(history)
        return history

    async with ApiClient(env, config.profile, concurrency=concurrency or config.concurrency) as client:
        return await run_plan(mappings, config=config, env=env, client=client, progress=progress,
                              history_opener=opener, service_user_ids=env.service_user_ids,
                              decisions=read_decisions(decisions_path(config.root)), today=date.today(),
                              keep_sources=False, given=given, select=select)


def _write_artifacts(request: PlanRequest, plan: Plan, digester: Digester | None) -> None:
    from loader.report.review_formats import write_review_outputs

    write_review_outputs(plan, dict(request.outputs), digester)  # the workbook keyed like the history
