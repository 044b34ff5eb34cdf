"""`loader show plan.json [--report plan.md] [--html plan.html] [--format json]`: a saved plan's
reports, no network.

What `terraform show` is to a saved plan: the terminal view, and the Markdown and HTML reports on
request, rendered from plan.json alone (no configuration read, no service called). plan.json holds
`changes` with PII already masked, and every renderer masks again. Exit 1 when the plan has errors
(as `loader plan` does), else 0. `--format json`: instead of the terminal view, the plan's JSON
document as `loader plan --format json` prints it, with `command` "show".
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
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text (default); json: one JSON document on stdout (schemas/output.schema.json)")


NEEDS_CONFIG = False  # plan.json alone
REVIEW_OUTPUTS = ("report", "html", "review")  # loader.report.review_formats


@dataclass(frozen=True)
class ShowRequest:
    plan: Path
    outputs: tuple[tuple[str, Path], ...]  # (review format, path) asked for: --report, --html, --review
    output: str = "text"  # --format


def request_from(args: argparse.Namespace) -> ShowRequest:
    return ShowRequest(args.plan, review_outputs(args, REVIEW_OUTPUTS), args.format)  # checked before any work


def run(request: ShowRequest) -> int:
    from loader.plan.plan_file import read_plan_json
    from loader.report.review_formats import write_review_outputs
    from loader.report.terminal import render

    plan = read_plan_json(request.plan)
    code = EXIT_ERROR if plan.has_errors else EXIT_OK
    if request.output == "json":
        from loader.report.machine import dumps, plan_document

        print(dumps(plan_document(plan, code, command="show")))
    else:
        render(plan, applying=True)  # closes with its digest: a saved plan is applied with --plan
    write_review_outputs(plan, dict(request.outputs))
    return code
