"""`loader show plan.json [--report plan.md] [--html plan.html]`: a saved plan's reports, no network.

What `terraform show` is to a saved plan: the terminal view, and the Markdown and HTML reports on
request, rendered from plan.json alone (no configuration read, no service called). plan.json holds
`changes` with PII already masked, and every renderer masks again. Exit 1 when the plan has errors
(as `loader plan` does), else 0.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from loader.errors import EXIT_ERROR, EXIT_OK
from loader.files.outputs import check_output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("plan", metavar="plan.json", type=Path, help="a plan written by `loader plan --out`")
    parser.add_argument("--report", metavar="plan.md", type=Path, help="write the Markdown report (pull requests, CI)")
    parser.add_argument("--html", metavar="plan.html", type=Path, help="write the self-contained HTML report")
    parser.add_argument("--review", metavar="review.xlsx", type=Path, help="write a review workbook (`loader decide`)")


NEEDS_CONFIG = False  # plan.json alone


@dataclass(frozen=True)
class ShowRequest:
    plan: Path
    report: Path | None
    html: Path | None
    review: Path | None = None


def request_from(args: argparse.Namespace) -> ShowRequest:
    for option, path in (("--report", args.report), ("--html", args.html), ("--review", args.review)):
        if path is not None:
            check_output(path, option)  # before any work, as `loader plan` does
    return ShowRequest(args.plan, args.report, args.html, args.review)


def run(request: ShowRequest) -> int:
    from loader.plan.plan_file import read_plan_json
    from loader.report import write_review_files
    from loader.report.review_workbook import write_review_option
    from loader.report.terminal import render

    plan = read_plan_json(request.plan)
    render(plan)
    for path in write_review_files(plan, report=request.report, html=request.html):
        print(f"wrote {path}", file=sys.stderr)
    write_review_option(plan, request.review)
    return EXIT_ERROR if plan.has_errors else EXIT_OK
