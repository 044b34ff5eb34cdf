"""The value steps are tables (`TRANSFORM_STEPS`, `TYPE_STEPS`) holding exactly the names the
mapping schema allows; a step no table has is refused, never silently skipped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loader.cli import main
from loader.source.mapping_file import mapping_schema
from loader.source.steps import TRANSFORM_STEPS, TYPE_STEPS, Steps, UnknownStep, apply_steps, compile_steps


def _field_spec() -> dict[str, Any]:
    spec: dict[str, Any] = mapping_schema()["$defs"]["field_spec"]["properties"]
    return spec


def test_every_transform_the_schema_allows_is_a_step_and_every_step_is_allowed() -> None:
    assert set(_field_spec()["transform"]["items"]["enum"]) == set(TRANSFORM_STEPS)


def test_every_type_the_schema_allows_is_a_step_and_every_step_is_allowed() -> None:
    assert set(_field_spec()["type"]["enum"]) == set(TYPE_STEPS)


@pytest.mark.parametrize("steps", [Steps(transform=("strip", "reverse")), Steps(type="colour")])
def test_a_step_no_table_has_is_refused_not_skipped(steps: Steps) -> None:
    with pytest.raises(UnknownStep):
        compile_steps(steps)
    with pytest.raises(UnknownStep):
        apply_steps(" x ", steps)


def test_loader_validate_reports_an_unknown_transform_at_its_file_line_col(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    Path("courses.csv").write_text("Code\nA1\n", encoding="utf-8")
    Path("m.yaml").write_text(
        "version: 1\nsource: courses.csv\nentities:\n  courses:\n    entity: course\n    key: [code]\n"
        "    fields:\n      code: {column: Code, transform: [strip, reverse]}\n", encoding="utf-8")
    assert main(["validate", "m.yaml"]) != 0
    out = capsys.readouterr()
    assert "m.yaml:8:47" in out.out + out.err and "reverse" in out.out + out.err
