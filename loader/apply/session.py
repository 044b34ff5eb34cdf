"""One apply, start to end, as a library function: plan (or take a saved plan), check, confirm,
write with progress and Ctrl-C handling, journaling into the environment's history.

    outcome = await apply_session(settings, config, env, saved_plan)   # outcome.results: None, nothing to do

The command (`loader.commands.apply`) parses arguments, prints and writes the results; tests call
this directly.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from loader import event_loop
from loader.apply.executor import ApplyOptions, apply_plan
from loader.apply.guards import MaxChanges
from loader.apply.history_checks import applied_by, check_history_lines
from loader.apply.journaling import journal_confirmations
from loader.apply.prepare import (
    PlanReading,
    check_new_plan,
    prepare_saved_plan,
    saved_personal_entities,
    saved_plan,
)
from loader.apply.results import RecordResult, Results
from loader.apply.stale import StaleCheck
from loader.config import Config, Environment
from loader.console import BlockAdvance, ask_yes, block_progress
from loader.errors import LoaderError, PlanError
from loader.history.opening import open_history
from loader.history.store import History
from loader.plan.model import Plan
from loader.plan.plan_stream import SealedPlan
from loader.source.sources import SourceSet
from loader.words import plural

INTERRUPTED_NOTICE = "\ninterrupted: finishing the requests in flight, then writing results (Ctrl-C again to abort)"

Confirm = Callable[[int, str], None]  # (changes, environment): returns to go ahead, raises to refuse


@dataclass(frozen=True)
class SessionSettings:
    """What an apply session was asked: MAPPING files (empty with a saved plan) and the checks."""

    mappings: tuple[Path, ...] = ()
    select: tuple[str, ...] = ()  # --select: the blocks of `mappings` planned (none: every block)
    expected_digest: str | None = None
    partial: bool = False
    max_changes: MaxChanges | None = None
    concurrency: int | None = None
    by: str | None = None  # who applies (--by); None: the CI actor, the git user, the OS user
    quiet: bool = False  # stdout carries a JSON document: the human text goes to stderr, no bars
    confirm: Confirm | None = None  # asked before writing a plan made now; None: no question
    show: Callable[[Plan], None] | None = None  # shows a plan made now before the question (the command's)
    before_writes: Callable[[Plan], object] | None = None  # called once every check passed, before the first write


@dataclass(frozen=True)
class SessionOutcome:
    """The results (None when nothing was to apply), the plan and, when made here, its sources."""

    results: Results | None
    plan: Plan
    sources: SourceSet | None = None


async def apply_session(settings: SessionSettings, config: Config, env: Environment,
                        saved: Plan | SealedPlan | None) -> SessionOutcome:
    """Apply `saved` (a sealed plan: its records read as it is applied), or the plan made now of
    `settings.mappings`, to `env`."""
    from loader.api.client import ApiClient

    concurrency = settings.concurrency or config.concurrency
    human = _human(settings)
    async with ApiClient(env, config.profile, concurrency=concurrency) as client:
        stale: StaleCheck | None = None
        sources: SourceSet | None = None
        reading: PlanReading | None = None
        if saved is not None:
            history = open_history(config, env.name, saved_personal_entities(saved, config.profile))
            plan, reading = saved_plan(saved, history)
            check_history_lines(plan, history)
            stale = await prepare_saved_plan(plan, client, env.name, reading)  # runs beside the writes
        else:
            plan, sources, history = await _make_plan(settings, config, env, client)
            changes = check_new_plan(plan, expected_digest=settings.expected_digest, partial=settings.partial,
                                     guard=settings.max_changes)
            if changes == 0:
                print("Nothing to apply: the service already matches the source.", file=human)
                if history is not None:  # fields the platform and the sheet now agree on: W moves to live
                    by = applied_by(settings.by, os.environ, config.root)
                    journal_confirmations(plan, config.profile, history, client.environment or env.name, by)
                return SessionOutcome(None, plan, sources)
            if settings.confirm is not None:
                settings.confirm(changes, client.environment or plan.environment)
        if settings.before_writes is not None:
            settings.before_writes(plan)
        results = await _write(settings, config, plan, client, stale, history, reading)
        plan = plan if reading is None else reading.sealed.plan
        return SessionOutcome(results, plan, sources)


async def _write(settings: SessionSettings, config: Config, plan: Plan, client: Any, stale: StaleCheck | None,
                 history: History | None, reading: PlanReading | None) -> Results:
    """The plan written with progress bars, Ctrl-C stopping the dispatch, each write journaled
    (`reading`: its records, read meanwhile)."""
    stop = asyncio.Event()
    options = ApplyOptions(concurrency=settings.concurrency or config.concurrency, partial=settings.partial,
                           stale=stale, more=None if reading is None else reading.batches())
    totals = reading.totals if reading is not None else {block.name: len(block.records) for block in plan.blocks}
    drawn = False if settings.quiet else None
    by = applied_by(settings.by, os.environ, config.root) if history is not None else None
    with block_progress(totals, enabled=drawn) as advance, event_loop.stop_on_signals(stop, INTERRUPTED_NOTICE):
        return await apply_plan(
            plan, client, config.profile, options, stop=stop, listener=_listener(advance),
            environment=client.environment, history=history, journal_by=by,
        )


def ask_to_apply(changes: int, environment: str) -> None:
    """Ask on the terminal before writing; refuse when the answer is not yes or nobody can answer."""
    answer = ask_yes(f"Apply {plural(changes, 'change')} to {environment}?")
    if answer is None:
        raise LoaderError(
            "not asking for confirmation: stdin is not a terminal; nothing was applied",
            hint="pass --yes to apply without asking",
        )
    if not answer:
        raise PlanError("not applied: the answer was not yes")


def _listener(advance: BlockAdvance | None) -> Callable[[RecordResult], None] | None:
    return None if advance is None else lambda result: advance(result.block)


async def _make_plan(settings: SessionSettings, config: Config, env: Environment,
                     client: Any) -> tuple[Plan, SourceSet, History | None]:
    """The planner's plan for the MAPPING files, with its terminal summary printed, and the history
    it was planned against (opened by the planner once it knows the personal entities)."""
    from datetime import date

    from loader.history.decisions import decisions_path, read_decisions
    from loader.plan.run import run_plan
    opened: list[History | None] = []

    def opener(personal: frozenset[str]) -> History | None:
        opened.append(open_history(config, env.name, personal))
        return opened[-1]

    planned = await run_plan(list(settings.mappings), config=config, env=env, client=client,
                             progress=False if settings.quiet else None, history_opener=opener,
                             service_user_ids=env.service_user_ids,
                             decisions=read_decisions(decisions_path(config.root)), today=date.today(),
                             select=settings.select)
    if settings.show is not None:
        settings.show(planned.plan)
    return planned.plan, planned.sources, opened[0] if opened else None


def _human(settings: SessionSettings) -> TextIO:
    """Where the human text goes: stdout, or stderr when stdout carries the JSON document."""
    return sys.stderr if settings.quiet else sys.stdout
