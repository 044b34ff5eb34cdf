"""The Python API: plan, apply and show from a project's mapping files, in a notebook or a pipeline
task (Airflow, Dagster), with a block's source given as a table the program holds.

    from loader import library

    plan = library.plan(["mappings/units.yaml"], tables={"units": frame})
    print(library.show(plan))           # the terminal view, as text
    results = library.apply(plan)       # writes what the plan says, and nothing else
    assert results.ok

A table replaces a source the mapping names in its `sources:` (a `table: []` entry, or any other
kind): a pandas or polars DataFrame, an Arrow table, or a list of dicts (`loader.source.readers.frames`
says how their values become cells). Everything else is as `loader plan`, `loader apply --plan` and
`loader show` do it: the same configuration (`loader.yaml` in the working directory, or `config=`),
environments (the embedded sandbox by default), history and decisions. Errors a user can act on are
raised as `loader.errors.LoaderError` (its message names the place and what to do); only short notes
go to stderr (files written, the sandbox in use): what it made is in the values it returns. The
interpreter's settings are left as they are: the command line's own tuning
(`loader.cli.tuned_interpreter`) is not applied here.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from loader import event_loop
from loader.apply.guards import parse_max_changes
from loader.apply.history_checks import applied_by
from loader.apply.prepare import check_plan_file
from loader.apply.results import Results
from loader.apply.session import SessionSettings, apply_session
from loader.apply.source_check import check_sources as check_source_values
from loader.commands.plan import plan_project
from loader.commands.revert_decisions import record_revert_decisions
from loader.config import Config, load_config
from loader.environments import open_environment
from loader.errors import LoaderError, unwrap_error
from loader.history.store import History
from loader.plan.model import Plan
from loader.plan.plan_file import read_plan_json
from loader.report.review_formats import write_review_outputs
from loader.report.terminal import render_text
from loader.source.readers.frames import table_of

__all__ = ["Plan", "Results", "apply", "plan", "show"]

T = TypeVar("T")
PathLike = str | os.PathLike[str]


def plan(
    mappings: Sequence[PathLike],
    *,
    tables: Mapping[str, Any] | None = None,
    env: str | None = None,
    config: PathLike | None = None,
    concurrency: int | None = None,
    select: Sequence[str] = (),
) -> Plan:
    """The plan of `mappings` against the environment `env` (default: the configuration's default,
    else the embedded sandbox), as `loader plan` makes it.

    `tables` gives sources by the names of the mappings' `sources:`, each a pandas or polars
    DataFrame, an Arrow table or a list of dicts; a name no block reads is an error. `select`: the
    blocks planned, as `loader plan --select` names them (none: every block). The plan's errors are
    in the plan (`plan.has_errors`, `show(plan)`), as the command shows them.
    """
    settings = _config(config)
    given = {name: table_of(name, data) for name, data in (tables or {}).items()}
    opened: list[History | None] = []
    with open_environment(settings, env) as environment:
        made = _run(plan_project([Path(m) for m in mappings], settings, environment, opened,
                                 concurrency=concurrency, progress=False, given=given, select=select))
    return made.plan


def apply(
    plan: Plan | PathLike,
    *,
    env: str | None = None,
    config: PathLike | None = None,
    partial: bool = False,
    max_changes: str | None = None,
    concurrency: int | None = None,
    by: str | None = None,
    check_sources: bool = False,
) -> Results:
    """Apply `plan` (a Plan from `plan`, or a plan.json's path) as `loader apply --plan` does: its
    inputs' fingerprints, environment and stale records checked first, then exactly its writes,
    journaled in the environment's history. `max_changes` is `--max-changes` ("50", "10%");
    `check_sources` is `--check-sources` (the sources read again: refused where a record the plan
    writes would now differ).
    Raises LoaderError when it refuses; `results.ok` says whether every write was done.
    """
    settings = _config(config)
    saved = plan if isinstance(plan, Plan) else read_plan_json(Path(plan))
    guard = parse_max_changes(max_changes) if max_changes is not None else None
    name = check_plan_file(saved, settings.profile, env_name=env, partial=partial, guard=guard)
    if check_sources:
        check_source_values(saved, settings.profile)
    session = SessionSettings(partial=partial, max_changes=guard, concurrency=concurrency, by=by, quiet=True)
    with open_environment(settings, name) as environment:
        outcome = _run(apply_session(session, settings, environment, saved))
    if outcome.results is None:  # nothing to apply
        return Results(saved.environment, saved.env_name, ())
    who = applied_by(by, os.environ, settings.root) or "loader"
    record_revert_decisions(outcome.plan, outcome.results, settings.profile, project_dir=settings.root, by=who,
                            today=date.today())
    return outcome.results


def show(
    plan: Plan | PathLike,
    *,
    out: PathLike | None = None,
    report: PathLike | None = None,
    html: PathLike | None = None,
    review: PathLike | None = None,
    width: int = 120,
) -> str:
    """The plan's terminal view as text (what `loader plan` prints), and the files asked for: `out`
    plan.json (for `loader apply --plan`), `report` Markdown, `html`, `review` a review workbook.
    `plan` is a Plan or a plan.json's path; nothing is sent to the service."""
    shown = plan if isinstance(plan, Plan) else read_plan_json(Path(plan))
    asked = {"out": out, "report": report, "html": html, "review": review}
    write_review_outputs(shown, {kind: Path(path) for kind, path in asked.items() if path is not None})
    return render_text(shown, width=width)


def _config(path: PathLike | None) -> Config:
    return load_config(Path(path) if path is not None else None)


def _run(work: Coroutine[Any, Any, T]) -> T:
    """`work` run to its end; in a thread of its own when this one runs an event loop already (a
    Jupyter notebook's), which cannot run another. The first error a user can act on is raised
    alone, not inside the group of concurrent tasks that failed together."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _unwrapped(work)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="loader") as pool:
        return pool.submit(_unwrapped, work).result()


def _unwrapped(work: Coroutine[Any, Any, T]) -> T:
    try:
        return event_loop.run(work)
    except BaseExceptionGroup as group:
        error = unwrap_error(group)
        if isinstance(error, LoaderError | KeyboardInterrupt):
            raise error from None
        raise
