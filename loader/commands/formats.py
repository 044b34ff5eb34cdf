"""`--format text|json|github`, shared by validate, plan and apply.

`text` (default): the human report on stdout. `json`: one JSON document on stdout
(schemas/output.schema.json), the human text on stderr or not at all. `github`: the human report,
workflow annotations for findings, and a Markdown job summary (`$GITHUB_STEP_SUMMARY`).
"""

from __future__ import annotations

import argparse

FORMATS = ("text", "json", "github")


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text (default); json: one JSON document on stdout (schemas/output.schema.json); "
        "github: workflow annotations and a job summary",
    )
