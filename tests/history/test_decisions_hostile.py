"""decisions.yaml as hostile input: read by the one YAML reader with its bounds, through the real
`loader decide` command. Every probe is one `loader: error:` naming the file, exit 1, within 30 s
and 1.5 GB; nothing written."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.probe import run_loader
from helpers.report import review_plan

from loader.files.inputs import MAX_TEXT_FILE_BYTES
from loader.history.digests import Digester
from loader.report.review_workbook import write_review_workbook

_BLOCK = ('  - entity: "school"\n    key: "[\\"K{n}\\"]"\n    field: "name"\n    environment: "local"\n'
          '    decision: "skip"\n    refused: "x5hYBiwTF2bp"\n    reason: "{pad}"\n    by: "ana"\n'
          '    date: "2026-11-25"\n')


def _laughs(path: Path) -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    path.write_text("\n".join([*lines, "decisions: *a9"]) + "\n", encoding="utf-8")


def _deep(path: Path) -> None:
    path.write_text("decisions: " + "[" * 10_000 + "]" * 10_000 + "\n", encoding="utf-8")


def _deep_block(path: Path) -> None:
    path.write_text("".join(" " * i + "- \n" for i in range(0, 4_000, 2)), encoding="utf-8")


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _huge(path: Path) -> None:  # 370,000 decisions in 100 MB
    with path.open("w", encoding="utf-8") as out:
        out.write("version: 1\ndecisions:\n")
        pad = "p" * 60
        for start in range(0, 370_000, 1000):
            out.write("".join(_BLOCK.replace("{n}", str(n)).replace("{pad}", pad) for n in range(start, start + 1000)))


def _many(path: Path) -> None:  # under the size bound, over the values bound
    with path.open("w", encoding="utf-8") as out:
        out.write("version: 1\ndecisions:\n")
        out.write("".join(_BLOCK.replace("{n}", str(n)).replace("{pad}", "") for n in range(40_000)))


def _unknown_key(path: Path) -> None:
    path.write_text("version: 1\ndecisons: []\ndecisions: []\n", encoding="utf-8")


def _decided_twice(path: Path) -> None:
    one = _BLOCK.replace("{n}", "1").replace("{pad}", "")
    path.write_text("version: 1\ndecisions:\n" + one + one.replace('"skip"', '"skip"  # again'), encoding="utf-8")


PROBES: dict[str, tuple[Callable[[Path], None], str]] = {
    "billion laughs": (_laughs, "aliases expanded"),
    "flow nested 10,000 deep": (_deep, "nest"),
    "block nested 2,000 deep": (_deep_block, "nest"),
    "a named pipe": (_fifo, "not a regular file"),
    "a symlink to /dev/zero": (_zero, "not a regular file"),
    "370,000 decisions in 100 MB": (_huge, f"more than the {MAX_TEXT_FILE_BYTES:,} allowed"),
    "40,000 decisions under the size bound": (_many, "more than 200,000 values"),
    "an unknown top-level key": (_unknown_key, "unknown key 'decisons'"),
    "one change decided twice": (_decided_twice, "decisions 1 and 2 decide one change"),
}


@pytest.fixture(scope="module")
def review(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("review") / "review.xlsx"
    write_review_workbook(review_plan(), path, Digester(frozenset({"applicant"}), b"k" * 32))
    return path


@pytest.mark.parametrize("probe", PROBES, ids=list(PROBES))
def test_a_hostile_decisions_file_is_one_clear_error_within_the_bounds(
    probe: str, review: Path, tmp_path: Path
) -> None:
    make, message = PROBES[probe]
    make(tmp_path / "decisions.yaml")
    before = sorted(p.name for p in tmp_path.iterdir())
    result = run_loader(["decide", str(review), "--by", "ana"], tmp_path)
    result.assert_refused_cleanly()
    assert message in result.stderr and "decisions.yaml" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before

