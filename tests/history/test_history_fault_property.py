"""Property: any sequence of applies (some losing half their answers, some killed with SIGKILL at a
random write) and a person's edits in the platform, followed by re-runs, converges to the sheet
with every edit the person made still live, is never refused as "the history is behind", and
leaves every journaled write with its stamp.

The command line against a sandbox serving in a thread (a killed apply in a child process); a
fresh project and sandbox per example. Derandomised under CI=true (tests/conftest.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from helpers.fault_project import BEHIND, FIELDS, Expected, FaultProject, converge, fault_project
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loader.plan.model import Action
from loader.plan.plan_file import read_plan_json
from loader.sandbox.server import FaultOptions

CODES = ("K0", "K1", "K2", "K3")
LOST = FaultOptions(lost_rate=0.5, seed=5)  # with two attempts a request: many an update found landed by its look-up

_edit = st.tuples(st.just("edit"), st.sampled_from(CODES), st.sampled_from(FIELDS))
_apply = st.tuples(st.just("apply"), st.booleans(),
                   st.none() | st.tuples(st.integers(1, 4), st.sampled_from((0.0, 0.01, 0.05))))
STEPS = st.lists(st.one_of(_edit, _apply), min_size=1, max_size=5)


def _step(project: FaultProject, expected: Expected, step: tuple[Any, ...], number: int) -> None:
    if step[0] == "edit":
        _, code, field = step
        expected.edit(project, code, field, f"Staff {code} {field} {number}")
        return
    _, lost, kill = step
    project.faults(LOST if lost else None)
    if kill is not None:
        project.apply_killed(at_write=kill[0], settle_s=kill[1])
    else:
        code, err = project.apply()
        assert BEHIND not in err, err
    project.faults()


@pytest.mark.slow
@pytest.mark.timeout(900)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_applies_kills_lost_answers_and_edits_converge_with_every_edit_kept(steps: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as folder, fault_project(Path(folder), concurrency=2, attempts=2) as project:
        expected = Expected({code: (f"School {code}", "Arts") for code in CODES}, {})
        project.sheet(expected.sheet)
        assert project.apply()[0] == 0
        for code in CODES[:2]:  # the sheet changes; one school more to create
            expected.change(project, code, "name", f"Renamed {code}")
        expected.add(project, "N0", ("New", "Law"))
        for number, step in enumerate(steps):
            _step(project, expected, step, number)

        converge(project, expected, tries=3)
        assert expected.lost_edits(project.live()) == []
        exit_code, err = project.plan()
        assert exit_code == 0 and BEHIND not in err, err
        planned = read_plan_json(Path(folder) / "plan.json").records()
        assert [r.ref for r in planned if r.action is not Action.UNCHANGED] == []
        unstamped = [(e.kind, e.key) for j in project.history().journals() for e in j.entries
                     if e.kind in ("create", "update", "adopt") and e.updated is None]
        assert unstamped == []
