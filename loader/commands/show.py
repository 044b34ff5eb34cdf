"""`loader show plan.json [--report plan.md] [--html plan.html]`: a saved plan's reports, no network.

What `terraform show` is to a saved plan: the terminal view, and the Markdown and HTML reports on
request, rendered from plan.json alone (no configuration read, no service called). plan.json holds
`changes` with PII already masked, and every renderer masks again. Exit 1 when the plan has errors
(as `loader plan` does), else 0.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from loader.commands.formats import add_review_arguments, review_outputs
from loader.errors import EXIT_ERROR, EXIT_OK


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("plan", metavar="plan.json", type=Path, help="a plan written by `loader plan --out`")
    add_review_arguments(parser, REVIEW_OUTPUTS, "plan")


NEEDS_CONFIG = False  # plan.json alone
REVIEW_OUTPUTS = ("report", "html", "review")  # loader.report.review_formats


@dataclass(frozen=True)
class ShowRequest:
    plan: Path
    outputs: tuple[tuple[str, Path], ...]  # (review format, path) asked for: --report, --html, --review


def request_from(args: argparse.Namespace) -> ShowRequest:
    return ShowRequest(args.plan, review_outputs(args, REVIEW_OUTPUTS))  # checked before any work


def run(request: ShowRequest) -> int:
    from loader.plan.plan_file import read_plan_json
    from loader.report.review_formats import write_review_outputs
    from loader.report.terminal import render

    plan = read_plan_json(request.plan)
    render(plan, applying=True)  # closes with its digest: a saved plan is applied with --plan
    write_review_outputs(plan, dict(request.outputs))
    return EXIT_ERROR if plan.has_errors else EXIT_OK
