"""`loader decide` reads a review workbook written by the previous release: its columns (`live`,
`sheet`, the decision in column H, a create's field `CREATE`) are found by their names. The fixture
was written by `loader plan --review` of the sample project before the workbook's layout changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import openpyxl
import pytest
from helpers.review import decide_row

from loader.cli import main
from loader.errors import EXIT_OK
from loader.history.decisions import CREATE, Kind, decisions_path, read_decisions

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "review-previous-release.xlsx"


def test_a_workbook_of_the_previous_layout_is_decided_as_before(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    reviewed = tmp_path / "review.xlsx"
    shutil.copyfile(FIXTURE, reviewed)
    header = [c.value for c in openpyxl.load_workbook(reviewed)["Review"][1]]
    assert header[:8] == ["block", "record", "field", "live", "sheet", "rule", "place", "decision"]  # the old one
    decide_row(reviewed, "ENG", "name", "skip", "the faculty keeps its name")
    decide_row(reviewed, "HLT", CREATE, "skip", "not this year")
    assert main(["decide", "review.xlsx", "--by", "Ana Reviewer"]) == EXIT_OK
    decided = {(d.key, d.field): d for d in read_decisions(decisions_path(tmp_path)).entries}
    assert set(decided) == {('["ENG"]', "name"), ('["HLT"]', CREATE)}
    assert decided[('["ENG"]', "name")].decision is Kind.SKIP
    assert decided[('["HLT"]', CREATE)].reason == "not this year"
