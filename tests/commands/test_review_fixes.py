"""Faults found by reading the merged change: each answered with a message, never a crash."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from loader.cli import main
from loader.errors import EXIT_USAGE, SheetError
from loader.source.readers import read_sheet


def test_show_refuses_an_output_in_a_missing_folder_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["show", str(tmp_path / "plan.json"), "--report", str(tmp_path / "nowhere" / "plan.md")])
    assert code == EXIT_USAGE
    err = capsys.readouterr().err
    assert "does not exist" in err and "internal error" not in err


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs /proc")
def test_a_source_that_exists_but_cannot_be_read_is_a_sheet_error(tmp_path: Path) -> None:
    source = tmp_path / "mem.csv"
    source.symlink_to("/proc/self/mem")  # judged by its target's name (mem) before it is read
    with pytest.raises(SheetError, match="it is a link to a file whose name has no file extension"):
        read_sheet(source, "mem.csv")


def test_the_markdown_and_html_reports_are_written_for_their_owner_only(tmp_path: Path) -> None:
    from helpers.report import small_plan

    from loader.report.review_formats import write_review_outputs

    written = [tmp_path / "plan.md", tmp_path / "plan.html"]
    write_review_outputs(small_plan(), {"report": written[0], "html": written[1]})
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in written)
