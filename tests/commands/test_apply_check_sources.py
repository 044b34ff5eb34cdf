"""`apply --plan plan.json --check-sources`: a plan whose written record changed in its source is
refused, writing nothing; a source changed only where the plan writes nothing (an unmapped field,
the order of its records) is applied."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loader.cli import main

MAPPING = """\
version: 1
sources:
  catalogue:
    json: courses.json
    records: "$.items[*]"
entities:
  subjects:
    entity: subject
    source: catalogue
    key: [code]
    fields:
      code: code
      name: title
"""
ITEMS = [{"code": "INFO101", "title": "Databases", "seen": "monday"},
         {"code": "INFO202", "title": "Networks", "seen": "monday"}]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loader.yaml").write_text("{}\n", encoding="utf-8")
    (tmp_path / "m.yaml").write_text(MAPPING, encoding="utf-8")
    _write(tmp_path, ITEMS)
    assert main(["plan", "m.yaml", "--out", "plan.json"]) == 0
    return tmp_path


def _write(project: Path, items: list[dict[str, Any]]) -> None:
    (project / "courses.json").write_text(json.dumps({"items": items}), encoding="utf-8")


def test_a_plan_whose_written_record_changed_in_its_source_is_refused_writing_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(project, [ITEMS[0], {**ITEMS[1], "title": "Computer Networks"}])
    capsys.readouterr()
    assert main(["apply", "--plan", "plan.json", "--check-sources"]) == 1
    err = capsys.readouterr().err
    assert "the sources changed since the plan was made: 1 record it writes" in err
    assert "subjects INFO202 (courses.json › INFO202): name" in err and "INFO101" not in err
    _write(project, ITEMS)
    assert main(["plan", "m.yaml", "--detailed-exitcode"]) == 2  # nothing was written


def test_a_source_changed_only_where_the_plan_writes_nothing_is_applied(project: Path) -> None:
    _write(project, [{**item, "seen": "tuesday"} for item in reversed(ITEMS)])
    assert main(["apply", "--plan", "plan.json", "--check-sources"]) == 0
    assert main(["plan", "m.yaml", "--detailed-exitcode"]) == 0


def test_check_sources_goes_with_a_saved_plan(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["apply", "m.yaml", "--check-sources", "--yes"]) == 64
    assert "--check-sources goes with --plan" in capsys.readouterr().err
