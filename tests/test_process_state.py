"""The library changes no interpreter setting: planning against a running sandbox, writing and reading
plan.json, rendering the HTML report and applying leave the garbage collector (on or off, its
thresholds, its frozen objects) and the switch interval as they were, also while they run (a
watcher thread samples them), and leave no filter on any logger; the plan they make and apply is
whole without the command line's setting. Only the command line's entry point changes one
(`loader.cli.tuned_interpreter`: the collector off for one command)."""

from __future__ import annotations

import ast
import asyncio
import gc
import logging
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.apply import client_for
from helpers.plan import REPO, SAMPLE_MAPPINGS, SAMPLE_SEED, plan_against

from loader import cli
from loader.apply.executor import apply_plan
from loader.cli import tuned_interpreter
from loader.config import load_config
from loader.plan.plan_file import read_plan_json, write_plan_json
from loader.redaction import REDACTED_LOGGERS
from loader.report.html import render_html
from loader.sandbox.server import SandboxOptions, serve_in_thread

Settings = tuple[bool, tuple[int, int, int], float]
LOGGERS = (*REDACTED_LOGGERS, "")  # "": the root logger


def _settings() -> Settings:
    return gc.isenabled(), gc.get_threshold(), sys.getswitchinterval()


def _filters() -> dict[str, list[Any]]:
    return {name: list(logging.getLogger(name).filters) for name in LOGGERS}


class _Watcher:
    """Samples the settings in a thread of its own until stopped: every distinct value seen."""

    def __init__(self) -> None:
        self.seen: set[Settings] = {_settings()}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.001):
            self.seen.add(_settings())

    def __enter__(self) -> _Watcher:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self.seen.add(_settings())


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(REPO)
    yield REPO


def test_planning_writing_reading_rendering_and_applying_change_no_interpreter_setting(
    in_repo: Path, tmp_path: Path
) -> None:
    before, filters, frozen = _settings(), _filters(), gc.get_freeze_count()
    with serve_in_thread(SandboxOptions(seed=SAMPLE_SEED)) as sandbox, _Watcher() as watcher:
        plan = plan_against(sandbox, SAMPLE_MAPPINGS).plan
        write_plan_json(plan, tmp_path / "plan.json")
        read = read_plan_json(tmp_path / "plan.json")
        assert "<html" in render_html(read)

        async def apply() -> int:
            async with client_for(sandbox) as client:
                results = await apply_plan(read, client, load_config(None).profile)
            return len(results.records)

        assert asyncio.run(apply()) == len(read.records())
    assert watcher.seen == {before}
    assert gc.get_freeze_count() == frozen
    assert _filters() == filters


# What changes an interpreter setting for the whole process.
_SETTERS = {("gc", "disable"), ("gc", "enable"), ("gc", "freeze"), ("gc", "unfreeze"), ("gc", "set_threshold"),
            ("sys", "setswitchinterval"), ("asyncio", "set_event_loop_policy")}


def _calls_of_setters(path: Path) -> list[tuple[str, str, str]]:
    """(module, enclosing function, call) of each setter named in the module."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Name | ast.Attribute):
            continue
        name = None
        owner = node.value.id if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) else None
        if isinstance(node, ast.Attribute) and (owner, node.attr) in _SETTERS:
            name = f"{owner}.{node.attr}"
        elif "mallopt" in ast.unparse(node):
            name = "mallopt"
        if name:
            inside = [f.name for f in functions if f.lineno <= node.lineno <= (f.end_lineno or f.lineno)]
            found.append((str(path.relative_to(REPO)), inside[-1] if inside else "", name))
    return found


def test_only_the_command_line_s_tuned_interpreter_changes_an_interpreter_setting() -> None:
    modules = sorted((REPO / "loader").rglob("*.py"))
    assert modules
    calls = {call for path in modules for call in _calls_of_setters(path)}
    assert calls == {("loader/cli.py", "tuned_interpreter", "gc.disable"),
                     ("loader/cli.py", "tuned_interpreter", "gc.enable")}


def test_the_collector_is_off_for_a_command_and_back_as_it_was_after() -> None:
    assert gc.isenabled()
    with tuned_interpreter():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), tuned_interpreter():
        raise RuntimeError("a command that failed")
    assert gc.isenabled()
    gc.disable()
    try:
        with tuned_interpreter():
            pass
        assert not gc.isenabled()  # a program that had it off keeps it off
    finally:
        gc.enable()


def test_a_command_line_run_leaves_the_settings_as_they_were(
    in_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _settings()
    assert cli.main(["validate", *SAMPLE_MAPPINGS]) == 0, capsys.readouterr().err
    assert _settings() == before
