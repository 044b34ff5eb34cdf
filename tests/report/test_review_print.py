"""The review workbook as LibreOffice prints it (a PDF export): the guide, then the rows landscape and
one page wide. Skipped where LibreOffice is not installed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.large_plans import cycle

from loader.report.review_workbook import write_review_workbook

SOFFICE = shutil.which("soffice")


def _pages(pdf: Path) -> int:
    return len(re.findall(rb"/Type\s*/Page[^s]", pdf.read_bytes()))


@pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) is not installed")
def test_libreoffice_prints_the_guide_and_seventy_rows_one_page_wide(tmp_path: Path) -> None:
    assert SOFFICE is not None
    rows = write_review_workbook(cycle(70), tmp_path / "review.xlsx")
    assert rows >= 70
    done = subprocess.run(
        [SOFFICE, "--headless", "--norestore", f"-env:UserInstallation={(tmp_path / 'profile').as_uri()}",
         "--convert-to", "pdf", "--outdir", str(tmp_path), str(tmp_path / "review.xlsx")],
        capture_output=True, text=True, timeout=180, check=False,
    )
    assert done.returncode == 0, done.stderr
    pages = _pages(tmp_path / "review.pdf")
    # one page wide: the rows run down the pages, never across (a page across would double them)
    assert 2 <= pages <= 1 + (rows + 1) // 20 + 1, pages
