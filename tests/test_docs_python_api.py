"""docs/python-api.md's example runs as a notebook would run it: its mapping written where the page
says, then every Python block in order, in one namespace, against the embedded sandbox."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parent.parent / "docs" / "python-api.md"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(PAGE.read_text(encoding="utf-8")) if lang == language]


def test_the_pages_example_runs_cell_by_cell_against_the_sandbox(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loader.yaml").write_text("{}\n", encoding="utf-8")
    (tmp_path / "mappings").mkdir()
    (tmp_path / "mappings" / "units.yaml").write_text(_blocks("yaml")[0], encoding="utf-8")
    cells = _blocks("python")
    assert len(cells) >= 4
    namespace: dict[str, object] = {}
    for number, cell in enumerate(cells, start=1):
        exec(compile(cell, f"{PAGE.name} cell {number}", "exec"), namespace)  # as a notebook runs it
    assert (tmp_path / "plan.json").is_file() and (tmp_path / "plan.md").is_file()
