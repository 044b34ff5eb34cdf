"""`loader apply (MAPPING... | --plan plan.json)`: apply creates and updates in dependency order.

With MAPPING files it plans, shows the plan summary and asks before writing (unless --yes;
never when stdin is not a terminal). With --plan it applies exactly that reviewed plan after
checking the inputs' fingerprints, the target environment and stale records; it does not ask
again; with --check-sources it reads the plan's sources again first and refuses where a record the
plan writes would now differ (`loader.apply.source_check`). With MAPPING files and
`--expect-digest sha256:…` it refuses, writing nothing, unless the plan it makes has that digest
(the reviewed report's); `--select BLOCK` plans those blocks alone, as `plan --select` did for the
digest reviewed. `--results FILE` (repeatable) writes results.xlsx (.xlsx) or results.json
(.json). `--format json` prints one JSON document on stdout (the human text goes to stderr);
`--format github` adds annotations and a job summary. The apply itself, and its journal in the
environment's history (`--by NAME` says who applied), is `loader.apply.session`. An applied revert
plan leaves skip decisions for what it undid (`loader.commands.revert_decisions`).
Exit codes: 0 all applied, 1 a failure, skip or refusal, 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, replace
from datetime import date
from functools import partial
from pathlib import Path

from loader import event_loop
from loader.apply.guards import MaxChanges, parse_digest, parse_max_changes
from loader.apply.history_checks import applied_by
from loader.apply.prepare import check_plan_file
from loader.apply.session import SessionOutcome, SessionSettings, apply_session, ask_to_apply
from loader.apply.source_check import check_sources
from loader.commands.formats import add_format_argument
from loader.commands.revert_decisions import record_planned_revert_decisions, record_revert_decisions
from loader.commands.selection import add_select_argument, selected
from loader.config import Config
from loader.environments import open_environment
from loader.errors import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, UsageError
from loader.history.shape_store import record_shapes, shapes_path
from loader.plan.model import Plan
from loader.plan.plan_stream import SealedPlan, open_saved_plan
from loader.project import mappings_given_or_project
from loader.report.formats import print_apply_output
from loader.report.results_terminal import render_results
from loader.source.drift import shapes_of
from loader.source.sources import read_sources


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "mappings", nargs="*", metavar="MAPPING",
        help="mapping files (default: the project's, mappings/**/*.yaml; or use --plan)",
    )
    parser.add_argument("--plan", metavar="PLAN.json", help="apply this plan (made by `loader plan --out`)")
    add_select_argument(parser)
    parser.add_argument("--env", metavar="NAME", help="environment (default: default_environment, else sandbox)")
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--concurrency", type=int, metavar="N", help="requests in flight at most (default 8)")
    parser.add_argument("--partial", action="store_true", help="apply what a plan's errors do not touch")
    parser.add_argument(
        "--results",
        action="append",
        default=[],
        metavar="FILE",
        help="write outcomes: results.xlsx (source rows + status/id/message) or results.json; repeatable",
    )
    parser.add_argument(
        "--max-changes",
        metavar="N|P%",
        help="refuse to write more than N records, or P%% of the records in scope (live and desired)",
    )
    parser.add_argument(
        "--expect-digest",
        metavar="sha256:HEX",
        help="refuse, writing nothing, unless the plan made now has this digest (from the reviewed report)",
    )
    parser.add_argument(
        "--check-sources", action="store_true",
        help="with --plan: read the sources again and refuse where a record the plan writes would now differ",
    )
    parser.add_argument(
        "--by", metavar="NAME", help="who applies, for the history (default: the CI actor, else the git user)"
    )
    add_format_argument(parser)


@dataclass(frozen=True)
class ApplyRequest:
    """What `loader apply` was asked, as plain values (usage already checked)."""

    mappings: tuple[Path, ...]
    plan: Path | None
    env: str | None
    yes: bool
    concurrency: int | None
    partial: bool
    results: tuple[Path, ...]
    max_changes: MaxChanges | None
    expected_digest: str | None
    output: str = "text"  # --format
    by: str | None = None  # --by: who applies, for the history's journal
    check_sources: bool = False  # --check-sources: a saved plan's sources read again first
    select: tuple[str, ...] = ()  # --select: the blocks planned (none: every block)


def request_from(args: argparse.Namespace) -> ApplyRequest:
    if args.mappings and args.plan:
        raise UsageError("give either MAPPING files or --plan PLAN.json", hint="run `loader apply --help`")
    if args.concurrency is not None and not 1 <= args.concurrency <= 256:
        raise UsageError(f"--concurrency {args.concurrency}: use a number from 1 to 256")
    outputs = [Path(p) for p in args.results]
    if outputs:  # imported here: the workbook writer's openpyxl is slow to import, and seldom needed
        from loader.report.results_files import check_results_path

        for path in outputs:
            check_results_path(path)
    # `is not None`: an empty --max-changes "" (an unset CI variable) is a usage error, never "no limit".
    guard = parse_max_changes(args.max_changes) if args.max_changes is not None else None
    if args.expect_digest is not None and args.plan:
        raise UsageError(
            "--expect-digest goes with MAPPING files: apply makes the plan afresh and checks its digest",
            hint="a saved plan is bound by its input fingerprints already; drop --expect-digest or --plan",
        )
    if args.plan and selected(args):
        raise UsageError("--select goes with MAPPING files: a saved plan holds the blocks it was made of",
                         hint="drop --select, or apply the MAPPING files with --select")
    check = bool(getattr(args, "check_sources", False))
    if check and not args.plan:
        raise UsageError("--check-sources goes with --plan: a plan made now reads its sources anyway",
                         hint="drop --check-sources, or apply a saved plan with --plan PLAN.json")
    return ApplyRequest(
        mappings=() if args.plan else mappings_given_or_project(args.mappings, getattr(args, "config", None)),
        plan=Path(args.plan) if args.plan else None,
        env=args.env,
        yes=args.yes,
        concurrency=args.concurrency,
        partial=args.partial,
        results=tuple(outputs),
        max_changes=guard,
        expected_digest=parse_digest(args.expect_digest) if args.expect_digest is not None else None,
        output=getattr(args, "format", "text"),
        by=getattr(args, "by", None),
        check_sources=check,
        select=selected(args),
    )


def run(request: ApplyRequest, config: Config) -> int:
    plan_file = open_saved_plan(request.plan) if request.plan else None
    env_name = request.env
    if plan_file is not None:
        env_name = check_plan_file(
            plan_file, config.profile, env_name=request.env, partial=request.partial, guard=request.max_changes
        )
        if request.check_sources:  # every record is compared: the plan is read whole
            plan_file = plan_file.whole() if isinstance(plan_file, SealedPlan) else plan_file
            check_sources(plan_file, config.profile)
    settings = _settings(request)
    by = applied_by(request.by, os.environ, config.root) or "loader"
    if plan_file is not None and _plan_of(plan_file).revert_of:  # its undoing is not redone, even if killed
        plan_file = plan_file.whole() if isinstance(plan_file, SealedPlan) else plan_file
        settings = replace(settings, before_writes=partial(record_planned_revert_decisions, profile=config.profile,
                                                           project_dir=config.root, by=by, today=date.today()))
    with open_environment(config, env_name) as env:
        outcome = event_loop.run(apply_session(settings, config, env, plan_file))
        _record_shapes(config, env.name, outcome)
    results, plan = outcome.results, outcome.plan
    if plan_file is not None and results is not None:  # an applied revert: its undoing is not redone
        record_revert_decisions(plan, results, config.profile, project_dir=config.root, by=by, today=date.today())
    if results is None:
        print_apply_output(request.output, None, EXIT_OK, plan)
        return EXIT_OK
    print(render_results(results), file=sys.stderr if request.output == "json" else sys.stdout)
    written = True
    if request.results:
        from loader.report.results_files import write_results_files

        written = write_results_files(results, request.results, plan=plan, sources=outcome.sources)
    code = EXIT_INTERRUPTED if results.interrupted else EXIT_OK if results.ok and written else EXIT_ERROR
    print_apply_output(request.output, results, code, plan)
    return code


def _plan_of(saved: Plan | SealedPlan) -> Plan:
    return saved.head if isinstance(saved, SealedPlan) else saved


def _record_shapes(config: Config, env_name: str, outcome: SessionOutcome) -> None:
    """The shape of each source this apply read, for the next plan to tell drift against. An apply
    of a saved plan reads its mapping files' file sources again (their fingerprints matched the
    plan's); a query or URL it does not read again records no shape."""
    path = shapes_path(config, env_name)
    if path is None:
        return
    sources = outcome.sources
    if sources is None:
        mappings = sorted({Path(b.mapping_file) for b in outcome.plan.blocks if b.mapping_file})
        if not mappings or not all(m.is_file() for m in mappings):
            return
        sources = read_sources(mappings, config.profile, online=False)
    record_shapes(path, shapes_of(sources.blocks))


def _settings(request: ApplyRequest) -> SessionSettings:
    return SessionSettings(
        mappings=request.mappings, select=request.select, expected_digest=request.expected_digest,
        partial=request.partial,
        max_changes=request.max_changes, concurrency=request.concurrency, by=request.by,
        quiet=request.output == "json", confirm=None if request.yes else ask_to_apply,
        show=partial(_show_plan, quiet=request.output == "json"),
    )


def _show_plan(plan: Plan, *, quiet: bool) -> None:
    """The plan's terminal view before the question (on stderr when stdout carries JSON)."""
    from loader.console import console
    from loader.report.terminal import render

    render(plan, console(sys.stderr) if quiet else None, applying=True)
