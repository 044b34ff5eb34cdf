"""CSV sources as hostile input, through the real `loader validate`: a header of millions of columns
and a line of 149 MB are refused by a documented bound (one `loader: error:` or finding naming the
file, exit 1, within 30 s and 1.5 GB); a symlink named like a CSV file is judged by the file it leads
to, so nothing of /etc/passwd is ever printed as "the columns are"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.probe import SECONDS, run_loader

from loader.source.readers import limits

MAPPING = """version: 1
source: data.csv
entities:
  schools:
    entity: school
    key: [code]
    fields:
      code: Code
      name: Name
"""


def _wide_header(path: Path) -> None:  # 5,000,000 columns in 50 MB
    with path.open("w", encoding="utf-8") as out:
        for _ in range(50):
            out.write("Code,Name," * 50_000)
        out.write("x\n")


def _long_line(path: Path) -> None:  # one line of 149 MB
    with path.open("w", encoding="utf-8") as out:
        out.write("Code,Name\nSCI,")
        piece = "a" * (1 << 20)
        for _ in range(149):
            out.write(piece)
        out.write("\n")


def _many_columns_in_a_short_line(path: Path) -> None:  # 400,000 columns in under a MiB
    path.write_text("Code,Name\n" + "," * 400_000 + "\n", encoding="utf-8")


PROBES: dict[str, tuple[Callable[[Path], None], str]] = {
    "a header of 5,000,000 columns": (_wide_header, limits.CSV_LINE_CHARS.what),
    "a line of 149 MB": (_long_line, limits.CSV_LINE_CHARS.what),
    "400,000 columns in a short line": (_many_columns_in_a_short_line, limits.CSV_COLUMNS.what),
}


@pytest.mark.parametrize("probe", PROBES, ids=list(PROBES))
def test_a_hostile_csv_is_refused_by_a_documented_bound(probe: str, tmp_path: Path) -> None:
    make, what = PROBES[probe]
    (tmp_path / "m.yaml").write_text(MAPPING, encoding="utf-8")
    make(tmp_path / "data.csv")
    result = run_loader(["validate", "m.yaml"], tmp_path)
    said = result.stdout + result.stderr
    assert result.exit_code == 1, said[-2000:]
    assert "Traceback" not in said and "data.csv" in said
    assert what in said and "LOADER_MAX_CSV_" in said
    assert result.seconds < SECONDS and result.peak_bytes < 1536 * 1024 * 1024


@pytest.mark.parametrize("target", ["/etc/passwd", "secret"])
def test_a_symlink_named_like_a_csv_is_judged_by_its_target_and_never_printed(tmp_path: Path, target: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    secret = tmp_path / "secret"
    secret.write_text("root:x:0:0:hunter2\n", encoding="utf-8")
    (project / "m.yaml").write_text(MAPPING, encoding="utf-8")
    (project / "data.csv").symlink_to(secret if target == "secret" else Path(target))
    result = run_loader(["validate", "m.yaml"], project)
    said = result.stdout + result.stderr
    assert result.exit_code == 1, said
    assert "it is a link to a file whose name has no file extension" in said
    assert "hunter2" not in said and "root:x" not in said and "the columns are" not in said
