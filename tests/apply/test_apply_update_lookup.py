"""An update whose outcome is unknown when its retries run out is looked up before it is reported
failed; under the chaos faults (503s, lost answers, a rate limit, 16 at a time) every update run
ends with exit 0."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.apply import PROFILE, client_for, loader_yaml_for, make_plan, record
from helpers.project import SCHOOLS_MAPPING, write_schools

from loader.apply.executor import ApplyOptions, apply_plan
from loader.apply.results import Outcome, Results
from loader.cli import main
from loader.config import RetrySettings
from loader.errors import EXIT_OK
from loader.plan.model import Action
from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_thread

THREE_ATTEMPTS = RetrySettings(attempts=3, wait_initial=0.01, wait_max=0.05, wait_jitter=0.0, timeout=30.0)
SCHOOLS = 8
SEED = {"institution-a": {"schools": [
    {"id": f"00000000-0000-4000-8000-{i:012d}", "code": f"S{i}", "name": f"School {i}",
     "custom_attributes": {"Keep": f"k{i}"}}
    for i in range(SCHOOLS)
]}}


def _updates(sandbox: Any, names: dict[int, str], statuses: bool = False) -> Results:
    schools = [
        record("schools", "school", f"S{i}", {"name": name}, action=Action.UPDATE,
               live_id=f"00000000-0000-4000-8000-{i:012d}", row=i + 2)
        for i, name in names.items()
    ]

    async def go() -> Results:
        async with client_for(sandbox, retry=THREE_ATTEMPTS) as client:
            return await apply_plan(make_plan(("schools", "school", schools)), client, PROFILE, ApplyOptions())

    return asyncio.run(go())


def test_an_update_whose_every_answer_was_lost_is_looked_up_and_reported_updated() -> None:
    # Every write is committed and then answered 500: the retries run out, yet the record holds it.
    with serve_in_thread(SandboxOptions(seed=SEED, faults=FaultOptions(lost_rate=1.0, seed=2))) as sandbox:
        results = _updates(sandbox, {0: "Renamed 0", 1: "Renamed 1"})
        assert [(r.outcome, r.message) for r in results.records] == [(Outcome.UPDATED, None)] * 2
        assert sandbox.stats()["faults"]["lost"] >= 2 * THREE_ATTEMPTS.attempts


def test_status_steps_whose_every_answer_was_lost_are_looked_up_too() -> None:
    arrangement_id = "00000000-0000-4000-a000-000000000001"
    arrangement = {"id": arrangement_id, "code": "ART1", "name": "Old", "status": "DRAFT"}
    seed = {"institution-a": {"arrangements": [arrangement]}}
    with serve_in_thread(SandboxOptions(seed=seed, faults=FaultOptions(lost_rate=1.0, seed=4))) as sandbox:
        update = record("arrangements", "arrangement", "ART1", {"name": "New"}, action=Action.UPDATE,
                        live_id=arrangement_id, status_path=("READY", "ACTIVE"))

        async def go() -> tuple[Results, dict[str, Any] | None]:
            async with client_for(sandbox, retry=THREE_ATTEMPTS) as client:
                plan = make_plan(("arrangements", "arrangement", [update]))
                results = await apply_plan(plan, client, PROFILE, ApplyOptions())
                return results, await client.get("arrangement", arrangement_id)

        results, live = asyncio.run(go())
    (result,) = results.records
    assert (result.outcome, result.record_status, result.message) == (Outcome.UPDATED, "ACTIVE", None), result
    assert live is not None and (live["name"], live["status"]) == ("New", "ACTIVE")


def test_an_update_the_look_up_does_not_find_applied_is_reported_failed() -> None:
    # Every request fails before commit (reads too): the update is not claimed done.
    with serve_in_thread(SandboxOptions(seed=SEED, faults=FaultOptions(error_rate=1.0, seed=2))) as sandbox:
        results = _updates(sandbox, {0: "Renamed 0"})
        (result,) = results.records
        assert result.outcome is Outcome.FAILED and result.status in (500, 503), result


def _project(tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The default six attempts, with short waits between them (the faults are met the same).
    quick = "    retry: {wait_initial: 0.01, wait_max: 0.1, wait_jitter: 0.01}\n"
    (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "CHAOS_SECRET", settings=quick), encoding="utf-8")
    monkeypatch.setenv("CHAOS_SECRET", sandbox.client_secret)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schools.yaml").write_text(SCHOOLS_MAPPING, encoding="utf-8")


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_every_one_of_fifty_seeded_update_runs_under_chaos_faults_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # 10% 503/500 before commit, 5% answers lost after commit, a request rate limit, 16 at a time. The
    # faults are set once, so the sandbox's request bucket carries over from run to run: the limit
    # (scaled to these small runs, about 15 requests each) is met many times, and each 429 holds the
    # client back by its Retry-After while failures and lost answers spend the retry attempts.
    failures: list[tuple[int, int, str]] = []
    started = time.monotonic()
    with serve_in_thread(SandboxOptions(seed=SEED)) as sandbox:
        _project(tmp_path, sandbox, monkeypatch)
        sandbox.set_faults(FaultOptions(error_rate=0.10, lost_rate=0.05, rate_limit=12, seed=7))
        for run in range(50):
            write_schools(tmp_path / "schools.xlsx", [(f"S{i}", f"School {i} run {run}") for i in range(SCHOOLS)])
            code = main(["apply", "schools.yaml", "--env", "local", "--yes", "--concurrency", "16"])
            out = capsys.readouterr()
            if code != EXIT_OK:
                failures.append((run, code, out.out[-400:] + out.err[-400:]))
        stats = sandbox.stats()["faults"]
    assert failures == [], failures
    assert min(stats.get(k, 0) for k in ("error_500", "error_503", "lost", "rate_limited")) > 0, stats
    print(f"50 runs in {time.monotonic() - started:.1f} s; faults met: {stats}")
