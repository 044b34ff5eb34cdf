"""The review formats registry: plan, show and revert take their flags from it, and a format added
to it is written like the others, in the registry's order."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from helpers.report import small_plan

from loader.cli import build_parser
from loader.commands.formats import review_outputs
from loader.errors import UsageError
from loader.history.digests import Digester
from loader.plan.model import Plan
from loader.plan.plan_file import read_plan_json
from loader.report.review_formats import REVIEW_FORMATS, ReviewFormat, write_review_outputs


def _options(command: str, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """The review flags a command offers, as its usage shows them: option -> metavar."""
    with pytest.raises(SystemExit):
        build_parser({command}).parse_args([command, "--help"])
    shown = dict(re.findall(r"\[(--[a-z-]+) ([^\]\s]+)\]", capsys.readouterr().out))  # its usage line
    return {option: metavar for option, metavar in shown.items() if option[2:] in REVIEW_FORMATS}


@pytest.mark.parametrize(("command", "offered"), [
    ("plan", {"--out": "plan.json", "--report": "plan.md", "--html": "plan.html", "--review": "review.xlsx"}),
    ("show", {"--report": "plan.md", "--html": "plan.html", "--review": "review.xlsx"}),
    ("revert", {"--out": "revert.json", "--report": "revert.md", "--html": "revert.html"}),
])
def test_each_command_takes_its_review_flags_from_the_registry(
    command: str, offered: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _options(command, capsys) == offered


def test_the_formats_asked_for_are_checked_before_any_work(tmp_path: Path) -> None:
    args = argparse.Namespace(out=tmp_path / "plan.json", report=None, html=tmp_path / "missing" / "x.html")
    with pytest.raises(UsageError) as caught:
        review_outputs(args, ("out", "report", "html"))
    assert "--html" in str(caught.value)
    args.html = None
    assert review_outputs(args, ("out", "report", "html")) == (("out", tmp_path / "plan.json"),)


def test_a_format_added_to_the_registry_is_written_in_its_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def keys(plan: Plan, path: Path, digester: Digester | None) -> list[str]:
        path.write_text("\n".join(str(r.key) for r in plan.records()), encoding="utf-8")
        return [f"wrote {path} (keys)"]

    monkeypatch.setitem(REVIEW_FORMATS, "keys", ReviewFormat("keys", ".txt", "write the keys", keys))
    plan = small_plan()
    write_review_outputs(plan, {"keys": tmp_path / "k.txt", "out": tmp_path / "plan.json"})
    assert capsys.readouterr().err.splitlines() == [f"wrote {tmp_path / 'plan.json'}",
                                                    f"wrote {tmp_path / 'k.txt'} (keys)"]
    assert [r.key for r in read_plan_json(tmp_path / "plan.json").records()] == [r.key for r in plan.records()]
    assert (tmp_path / "k.txt").read_text(encoding="utf-8").count("\n") == len(list(plan.records())) - 1
