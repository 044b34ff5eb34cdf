"""Thin commands: each turns its argparse namespace into a frozen request of plain values."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest

from loader.cli import COMMANDS, _command_module, build_parser

ARGV = {
    "validate": ["validate", "m.yaml"],
    "plan": ["plan", "m.yaml", "--out", "plan.json", "--format", "json"],
    "apply": ["apply", "m.yaml", "--max-changes", "10%", "--results", "out.json"],
    "pull": ["pull", "course", "--out", "courses.xlsx"],
    "revert": ["revert", "--apply", "20260101T000000Z-abcdef", "--out", "revert.json"],
    "show": ["show", "plan.json"],
    "init": ["init", "book.xlsx"],
    "history": ["history", "--env", "local"],
    "decide": ["decide", "review.xlsx", "--by", "ana"],
    "whoami": ["whoami", "--env", "local"],
    "sandbox": ["sandbox", "serve", "--port", "0"],
    "test": ["test", "mappings/tests/units.test.yaml", "--format", "json"],
    "completion": ["completion", "bash"],
}


def test_every_command_is_covered() -> None:
    assert set(ARGV) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(ARGV))
def test_a_command_gets_a_frozen_request_of_plain_values(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(ARGV[name])
    request = _command_module(name).request_from(args)
    assert dataclasses.is_dataclass(request) and type(request).__dataclass_params__.frozen  # type: ignore[union-attr]  # typeshed's DataclassInstance has no __dataclass_params__
    for item in dataclasses.fields(request):
        assert not isinstance(getattr(request, item.name), argparse.Namespace)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(request, dataclasses.fields(request)[0].name, None)


def test_show_reads_no_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    from helpers.apply import make_plan

    from loader.cli import main
    from loader.plan.plan_file import write_plan_json

    monkeypatch.chdir(tmp_path)
    write_plan_json(make_plan(), tmp_path / "plan.json")
    (tmp_path / "broken.yaml").write_text("environments: [", encoding="utf-8")
    assert main(["show", "plan.json", "--config", "broken.yaml"]) == 0, capsys.readouterr().err
    assert main(["validate", "m.yaml", "--config", "broken.yaml"]) != 0  # a command that needs it reads it
    assert "broken.yaml" in capsys.readouterr().err
