"""The review formats a plan is written in: the plan file, the Markdown report, the HTML page and
the review workbook.

`REVIEW_FORMATS` maps each format's option name to what writes it. `loader plan`, `show` and
`revert` take their `--out/--report/--html/--review` flags from it (`loader.commands.formats`) and
write through `write_review_outputs`, in this order. A new review format is one entry here (its
writer in a module of its own). The writers are imported when a format is written, so building
the command line's parser loads none of them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from loader.words import plural

if TYPE_CHECKING:
    from loader.history.digests import Digester
    from loader.plan.model import Plan


@dataclass(frozen=True)
class ReviewFormat:
    """One review format: its option (`--<name>`), its file's suffix, its help, and its writer,
    which writes the plan to the path given and returns what to tell the user ("wrote plan.md").
    `stem` names the file in help (`review.xlsx`); None: the command's own (`plan.md`, `revert.md`)."""

    name: str
    suffix: str
    help: str
    write: Callable[[Plan, Path, Digester | None], list[str]]
    stem: str | None = None


def _plan_file(plan: Plan, path: Path, digester: Digester | None) -> list[str]:
    from loader.plan.plan_file import write_plan_json

    write_plan_json(plan, path)
    return [f"wrote {path}"]


def _markdown(plan: Plan, path: Path, digester: Digester | None) -> list[str]:
    from loader.report.markdown import write_markdown

    return [f"wrote {part}" for part in write_markdown(plan, path)]


def _html(plan: Plan, path: Path, digester: Digester | None) -> list[str]:
    from loader.report.html import write_html

    write_html(plan, path)
    return [f"wrote {path}"]


def _review_workbook(plan: Plan, path: Path, digester: Digester | None) -> list[str]:
    from loader.report.review_workbook import write_review_workbook

    count = write_review_workbook(plan, path, digester)  # keyed like the history: no personal value in clear
    return [f"wrote {path} ({plural(count, 'row')} to review)"]


REVIEW_FORMATS: dict[str, ReviewFormat] = {
    f.name: f
    for f in (
        ReviewFormat("out", ".json", "write the plan for `loader apply --plan`", _plan_file),
        ReviewFormat("report", ".md", "write a Markdown report (pull requests, CI)", _markdown),
        ReviewFormat("html", ".html", "write a self-contained HTML report", _html),
        ReviewFormat("review", ".xlsx", "write a review workbook (`loader decide`)", _review_workbook,
                     stem="review"),
    )
}


def write_review_outputs(plan: Plan, outputs: Mapping[str, Path], digester: Digester | None = None) -> None:
    """Write the plan in each format asked for (format name -> path), in the registry's order,
    saying on stderr what was written."""
    for name, review_format in REVIEW_FORMATS.items():
        path = outputs.get(name)
        if path is not None:
            for line in review_format.write(plan, path, digester):
                print(line, file=sys.stderr)
