"""`loader decide review.xlsx [--by NAME]`: record a review workbook's decisions in decisions.yaml.

The workbook is the one `loader plan --review` wrote, edited by a reviewer (rows sorted, filtered,
deleted). Every row is checked first (loader.report.review_reading); one bad row and nothing is
recorded. Then each skip, defer, conflict and duplicate (`create`, `same`) decision becomes an entry
of `decisions.yaml` beside loader.yaml (loader.history.decisions), replacing an earlier decision
about the same change; `apply` rows and empty decisions record nothing. No secret, no network: each
row carries its digest.

`--by` names who decided (default: the CI actor, else the git user, else the OS user).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from loader.actor import acting
from loader.console import clean
from loader.errors import EXIT_OK, UsageError
from loader.history.decisions import Decision, Kind
from loader.project import project_root
from loader.words import plural

if TYPE_CHECKING:
    from loader.report.review_reading import ReviewedWorkbook

NEEDS_CONFIG = False  # only the project's folder: decisions.yaml lies beside loader.yaml


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workbook", metavar="review.xlsx", type=Path,
                        help="a review workbook of `loader plan --review`")
    parser.add_argument("--by", metavar="NAME", help="who decided (default: CI actor, git user, OS user)")


@dataclass(frozen=True)
class DecideRequest:
    workbook: Path
    by: str
    project_dir: Path


def request_from(args: argparse.Namespace) -> DecideRequest:
    by = args.by.strip() if args.by is not None else default_by()
    if not by:
        raise UsageError("--by: give a name")
    config = getattr(args, "config", None)
    return DecideRequest(args.workbook, by, Path(config).parent if config else project_root())


def default_by(environ: os._Environ[str] | dict[str, str] | None = None) -> str:
    """The CI actor, else git's `user.name`, else the OS user."""
    return acting(None, os.environ if environ is None else environ) or "unknown"


def run(request: DecideRequest, today: date | None = None) -> int:
    from loader.history.decisions import decisions_path, read_decisions, write_decisions
    from loader.report.review_reading import read_review_workbook

    reviewed = read_review_workbook(request.workbook)
    path = decisions_path(request.project_dir)
    existing = read_decisions(path)  # read before writing: a broken file stops here, untouched
    new = decisions_from_review(reviewed, by=request.by, today=today or date.today())
    if new:
        write_decisions(path, existing.with_decisions(new))
    workbook = clean(str(request.workbook))  # a name given: no control character reaches the terminal
    print(f"{workbook}: {decided_words(new)} recorded in {clean(str(path))}" if new else
          f"{workbook}: no decision: nothing recorded", file=sys.stderr)
    return EXIT_OK


def decided_words(new: Sequence[Decision]) -> str:
    """`3 decisions (skip: 1, sheet: 2)`: how many, and how many of each kind, by the kind's name."""
    counts = Counter(d.decision for d in new)
    return f"{plural(len(new), 'decision')} ({', '.join(f'{k.value}: {counts[k]:,}' for k in Kind if counts[k])})"


_KINDS = {"skip": Kind.SKIP, "defer": Kind.DEFER, "platform": Kind.SKIP, "sheet": Kind.SHEET,
          "create": Kind.NEW, "same": Kind.SAME}


def decisions_from_review(reviewed: ReviewedWorkbook, *, by: str, today: date) -> list[Decision]:
    """The decisions of the reviewed rows. A conflict decided for the platform is a skip of the
    sheet's value; a held duplicate's `create` names the row's values, its `same` the live record.
    Two rows about one (record, field), the status steps of one record, give the one earliest in
    the plan: a skipped step holds the steps after it."""
    from loader.report.review_rows import decided_value

    order = {entry.row_id: at for at, entry in enumerate(reviewed.index)}
    chosen: dict[tuple[str, str, str], Decision] = {}
    for row in sorted(reviewed.rows, key=lambda r: order[r.entry.row_id]):
        entry = row.entry
        decision = Decision(
            environment=reviewed.environment, entity=entry.entity, key=entry.key, field=entry.field,
            refused=decided_value(entry.kind, row.decision, entry.digest), decision=_KINDS[row.decision],
            reason=row.reason, by=by, decided_on=today,
            until=row.until if row.decision == "defer" else None,
        )
        chosen.setdefault((entry.entity, entry.key, entry.field), decision)
    return list(chosen.values())
