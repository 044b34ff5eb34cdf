"""A plan opens each mapping file once: one read serves the collection choice, the reading of the
sheets and the fingerprint in plan.json. Counted through the interpreter's own "open" audit events."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.plan import copy_samples

from loader.cli import main

_watchers: list[Callable[[str, tuple[Any, ...]], None]] = []


def _on_event(event: str, args: tuple[Any, ...]) -> None:
    if _watchers and event == "open":  # cheap for the rest of the session: the hook stays installed
        for watch in list(_watchers):
            watch(event, args)


sys.addaudithook(_on_event)  # audit hooks cannot be removed: this one only forwards to _watchers


def _opens_of(target: Path) -> tuple[list[str], Callable[[str, tuple[Any, ...]], None]]:
    seen: list[str] = []
    wanted = os.path.realpath(target)

    def watch(_event: str, args: tuple[Any, ...]) -> None:
        path = args[0] if args else None
        if isinstance(path, (str, bytes, os.PathLike)) and os.path.realpath(os.fsdecode(path)) == wanted:
            seen.append(str(args[1:]))

    return seen, watch


def test_one_plan_opens_its_mapping_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    copy_samples(tmp_path)
    monkeypatch.chdir(tmp_path)
    for key in [k for k in os.environ if k.startswith("LOADER_")]:
        monkeypatch.delenv(key)
    mapping = tmp_path / "mappings" / "curriculum.yaml"
    opens, watch = _opens_of(mapping)
    _watchers.append(watch)
    try:
        code = main(["plan", "mappings/curriculum.yaml", "--out", "plan.json"])
    finally:
        _watchers.remove(watch)
    assert code == 0, capsys.readouterr().err
    assert "+ create HLT" in capsys.readouterr().out  # a real plan was made from it
    assert len(opens) == 1, opens
    # ... and the fingerprint plan.json carries is that of the bytes read
    fingerprints = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))["fingerprints"]
    assert fingerprints["mappings/curriculum.yaml"] == "sha256:" + hashlib.sha256(mapping.read_bytes()).hexdigest()
