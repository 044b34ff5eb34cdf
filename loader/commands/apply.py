"""`loader apply (MAPPING... | --plan plan.json)`: apply creates and updates in dependency order.

With MAPPING files it plans, shows the plan summary and asks before writing (unless --yes;
never when stdin is not a terminal). With --plan it applies exactly that reviewed plan after
checking the inputs' fingerprints, the target environment and stale records; it does not ask
again. With MAPPING files and `--expect-digest sha256:…` it refuses, writing nothing, unless the
plan it makes has that digest (the reviewed report's). `--results FILE` (repeatable) writes
results.xlsx (.xlsx) or results.json (.json). `--format json` prints one JSON document on stdout
(the human text goes to stderr); `--format github` adds annotations and a job summary.
Exit codes: 0 all applied, 1 a failure, skip or refusal, 130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeRemainingColumn
from rich.text import Text

from loader import event_loop
from loader.apply.executor import ApplyOptions, apply_plan
from loader.apply.guards import MaxChanges, parse_digest, parse_max_changes
from loader.apply.prepare import check_new_plan, check_plan_file, prepare_saved_plan
from loader.apply.results import RecordResult, Results
from loader.commands.formats import add_format_argument
from loader.config import Config, Environment
from loader.console import console
from loader.environments import open_environment
from loader.errors import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, LoaderError, PlanError, UsageError
from loader.files.outputs import check_output
from loader.findings import Finding
from loader.plan.model import Plan
from loader.plan.plan_file import read_plan_json
from loader.report.results_json import write_results_json
from loader.report.results_terminal import render_results
from loader.report.results_workbook import FieldCells, write_results_workbook

RESULT_SUFFIXES = (".xlsx", ".json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("mappings", nargs="*", metavar="MAPPING", help="mapping files (or use --plan)")
    parser.add_argument("--plan", metavar="PLAN.json", help="apply this plan (made by `loader plan --out`)")
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


def request_from(args: argparse.Namespace) -> ApplyRequest:
    if bool(args.mappings) == bool(args.plan):
        raise UsageError("give either MAPPING files or --plan PLAN.json", hint="run `loader apply --help`")
    if args.concurrency is not None and not 1 <= args.concurrency <= 256:
        raise UsageError(f"--concurrency {args.concurrency}: use a number from 1 to 256")
    outputs = [Path(p) for p in args.results]
    for path in outputs:
        if path.suffix.lower() not in RESULT_SUFFIXES:
            raise UsageError(f"--results {path}: use a .xlsx or .json file name")
        check_output(path, "--results")  # before the first write: results written at the end must not be lost
    # `is not None`: an empty --max-changes "" (an unset CI variable) is a usage error, never "no limit".
    guard = parse_max_changes(args.max_changes) if args.max_changes is not None else None
    if args.expect_digest is not None and args.plan:
        raise UsageError(
            "--expect-digest goes with MAPPING files: apply makes the plan afresh and checks its digest",
            hint="a saved plan is bound by its input fingerprints already; drop --expect-digest or --plan",
        )
    return ApplyRequest(
        mappings=tuple(Path(m) for m in args.mappings),
        plan=Path(args.plan) if args.plan else None,
        env=args.env,
        yes=args.yes,
        concurrency=args.concurrency,
        partial=args.partial,
        results=tuple(outputs),
        max_changes=guard,
        expected_digest=parse_digest(args.expect_digest) if args.expect_digest is not None else None,
        output=getattr(args, "format", "text"),
    )


@dataclass(frozen=True)
class _SourceContext:
    """What the source says beyond the plan, for results.xlsx (known when apply made the plan);
    how each block's source was read is in the plan itself."""

    plan: Plan | None = None
    field_cells: FieldCells = field(default_factory=dict)
    row_errors: Mapping[str, tuple[Finding, ...]] = field(default_factory=dict)


def run(request: ApplyRequest, config: Config) -> int:
    plan_file = read_plan_json(request.plan) if request.plan else None
    env_name = request.env
    if plan_file is not None:
        env_name = check_plan_file(
            plan_file, config.profile, env_name=request.env, partial=request.partial, guard=request.max_changes
        )
    with open_environment(config, env_name) as env:
        results, context, plan = event_loop.run(_apply(request, config, env, plan_file))
    if results is None:
        _print_machine(request, None, EXIT_OK, plan)
        return EXIT_OK
    print(render_results(results), file=_human(request))
    written = True
    for path in request.results:
        try:
            _write(results, path, context)
        except OSError as error:
            print(f"loader: error: cannot write {path}: {error.strerror or error}", file=sys.stderr)
            written = False
    if results.interrupted:
        code = EXIT_INTERRUPTED
    else:
        code = EXIT_OK if results.ok and written else EXIT_ERROR
    _print_machine(request, results, code, plan)
    return code


def _human(request: ApplyRequest) -> TextIO:
    """Where the human text goes: stdout, or stderr when stdout carries the JSON document."""
    return sys.stderr if request.output == "json" else sys.stdout


def _print_machine(request: ApplyRequest, results: Results | None, code: int, plan: Plan) -> None:
    if request.output == "text":
        return
    from loader.report.github import apply_summary, failed_annotations, write_summary
    from loader.report.machine import apply_document, dumps

    document = apply_document(results, code, plan)
    if request.output == "json":
        print(dumps(document))
    else:
        failed_annotations(document)
        write_summary(apply_summary(document))


def _write(results: Results, path: Path, context: _SourceContext) -> None:
    if path.suffix.lower() == ".json":
        write_results_json(results, path)
    else:
        notes = write_results_workbook(
            results,
            path,
            plan=context.plan,
            field_cells=context.field_cells,
            row_errors=context.row_errors,
        )
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    print(f"wrote {path}", file=sys.stderr)


async def _apply(
    request: ApplyRequest, config: Config, env: Environment, plan: Plan | None
) -> tuple[Results | None, _SourceContext, Plan]:
    from loader.api.client import ApiClient

    concurrency = request.concurrency or config.concurrency
    context = _SourceContext(row_errors={b.name: b.findings for b in plan.blocks} if plan else {})
    async with ApiClient(env, config.profile, concurrency=concurrency) as client:
        skip: dict[str, str] = {}
        if plan is not None:
            skip = await prepare_saved_plan(plan, client, env.name)
        else:
            plan, context = await _make_plan(request, config, env, client)
            changes = check_new_plan(
                plan, expected_digest=request.expected_digest, partial=request.partial, guard=request.max_changes
            )
            if changes == 0:
                print("Nothing to apply: the service already matches the source.", file=_human(request))
                return None, context, plan
            _confirm(request, changes, client.environment or plan.environment)
        stop = asyncio.Event()
        options = ApplyOptions(concurrency=concurrency, partial=request.partial, skip=skip)
        with _BlockProgress(plan, enabled=_human(request) is sys.stdout) as listener, _StopOnSigint(stop):
            results = await apply_plan(
                plan, client, config.profile, options, stop=stop, listener=listener, environment=client.environment
            )
        return results, replace(context, plan=plan), plan


async def _make_plan(
    request: ApplyRequest, config: Config, env: Environment, client: Any
) -> tuple[Plan, _SourceContext]:
    """The planner's plan for the MAPPING files, with its terminal summary printed."""
    from loader.plan.run import run_plan
    from loader.report.terminal import render

    quiet = request.output == "json"
    planned = await run_plan(list(request.mappings), config=config, env=env, client=client,
                             progress=False if quiet else None)
    render(planned.plan, console(sys.stderr) if quiet else None, applying=True)
    field_cells = {
        (b.block, rec.row.row): dict(rec.cells)
        for b in planned.sources.blocks
        for rec in b.records
        if rec.row.row is not None
    }
    row_errors = {b.name: b.findings for b in planned.plan.blocks}
    return planned.plan, _SourceContext(planned.plan, field_cells, row_errors)


def _confirm(request: ApplyRequest, changes: int, environment: str) -> None:
    if request.yes:
        return
    if not sys.stdin.isatty():
        raise LoaderError(
            "not asking for confirmation: stdin is not a terminal; nothing was applied",
            hint="pass --yes to apply without asking",
        )
    # The question goes to stderr: stdout may carry the one JSON document of --format json.
    print(f"Apply {changes} changes to {environment}? [y/N] ", end="", file=sys.stderr, flush=True)
    answer = input()
    if answer.strip().lower() not in ("y", "yes"):
        raise PlanError("not applied: the answer was not yes")


class _StopOnSigint:
    """First Ctrl-C (or SIGTERM, as CI cancels a job): stop dispatching and let in-flight requests
    finish, then write results; a second signal aborts."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, stop: asyncio.Event) -> None:
        self.stop = stop
        self.loop = asyncio.get_running_loop()
        self.installed = False

    def _on_signal(self) -> None:
        print("\ninterrupted: finishing the requests in flight, then writing results (Ctrl-C again to abort)",
              file=sys.stderr)
        self.stop.set()
        self._remove()

    def _remove(self) -> None:
        if self.installed:
            for number in self.SIGNALS:
                self.loop.remove_signal_handler(number)
            self.installed = False

    def __enter__(self) -> _StopOnSigint:
        try:
            for number in self.SIGNALS:
                self.loop.add_signal_handler(number, self._on_signal)
            self.installed = True
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            self.installed = True
            self._remove()
        return self

    def __exit__(self, *exc: object) -> None:
        self._remove()


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f}/s" if speed else "-/s")


class _BlockProgress:
    """Progress bars per block (rate and time left) when stdout is a terminal; else nothing."""

    def __init__(self, plan: Plan, *, enabled: bool = True) -> None:
        self.plan = plan
        self.enabled = enabled
        self.bars: Any = None
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> Callable[[RecordResult], None] | None:
        if not (self.enabled and sys.stdout.isatty()):
            return None
        self.bars = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeRemainingColumn(),
            console=console(),
        )
        for block in self.plan.blocks:
            self.tasks[block.name] = self.bars.add_task(block.name, total=len(block.records))
        self.bars.start()
        return self._advance

    def _advance(self, result: RecordResult) -> None:
        task = self.tasks.get(result.block)
        if task is not None:
            self.bars.advance(task)

    def __exit__(self, *exc: object) -> None:
        if self.bars is not None:
            self.bars.stop()
