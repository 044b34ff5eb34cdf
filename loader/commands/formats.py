"""The output flags commands share: `--format text|json|github` (validate, plan, apply) and the
review formats' flags (plan, show, revert: `loader.report.review_formats`).

`text` (default): the human report on stdout. `json`: one JSON document on stdout
(schemas/output.schema.json), the human text on stderr or not at all. `github`: the human report,
workflow annotations for findings, and a Markdown job summary (`$GITHUB_STEP_SUMMARY`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from loader.report.review_formats import REVIEW_FORMATS

FORMATS = ("text", "json", "github")


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text (default); json: one JSON document on stdout (schemas/output.schema.json); "
        "github: workflow annotations and a job summary",
    )


def add_review_arguments(parser: argparse.ArgumentParser, names: Sequence[str], stem: str) -> None:
    """The review formats' flags `names` (`out`, `report`, `html`, `review`: loader.report.review_formats),
    shown with files named after `stem` (`plan.md`, `revert.md`)."""
    for name in names:
        review_format = REVIEW_FORMATS[name]
        metavar = f"{review_format.stem or stem}{review_format.suffix}"
        parser.add_argument(f"--{name}", metavar=metavar, type=Path, help=review_format.help)


def review_outputs(args: argparse.Namespace, names: Sequence[str]) -> tuple[tuple[str, Path], ...]:
    """The review formats asked for, as (format name, path) in the registry's order, each path
    checked as an output before any work (a lost plan helps nobody)."""
    from loader.files.outputs import check_output

    asked = tuple((name, path) for name in REVIEW_FORMATS if name in names
                  and (path := getattr(args, name, None)) is not None)
    for name, path in asked:
        check_output(path, f"--{name}")
    return asked
