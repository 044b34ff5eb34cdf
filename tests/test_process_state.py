"""The library changes no interpreter setting: planning against a running sandbox, writing and reading
plan.json, rendering the HTML report and applying leave the garbage collector (on or off, its
thresholds, its frozen objects) and the switch interval as they were, also while they run (a
watcher thread samples them), and leave no filter on any logger. Nothing in `loader/` calls the
functions that change them."""

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

from loader.apply.executor import apply_plan
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


def _calls_of_setters(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in _SETTERS:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value.id}.{node.attr}")
        elif isinstance(node, ast.Name | ast.Attribute) and "mallopt" in ast.unparse(node):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: mallopt")
    return found


def test_no_library_module_changes_an_interpreter_setting() -> None:
    modules = sorted((REPO / "loader").rglob("*.py"))
    assert modules
    assert [call for path in modules for call in _calls_of_setters(path)] == []
