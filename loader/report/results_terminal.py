"""The terminal summary of an apply: counts per block, then what failed or was skipped and why."""

from __future__ import annotations

from collections.abc import Mapping

from loader.apply.results import ANSWER_LOST_ADOPTED, OUTCOMES, Outcome, Results
from loader.report.view import clean

SHOWN_PER_OUTCOME = 20


def _count_line(counts: Mapping[Outcome, int], blocked: int) -> str:
    words = [f"{counts.get(o, 0)} {o.value}" for o in OUTCOMES]
    if blocked:
        words[OUTCOMES.index(Outcome.SKIPPED)] += f" ({blocked} blocked by errors)"
    return ", ".join(words)


def render_results(results: Results) -> str:
    """Plain text (the command may colour it): one line per block, then a line per problem."""
    lines = [f"Applied to {results.environment} ({results.env_name}):"]
    lines += _count_table(results)
    lines += _problem_lines(results)
    lines += _notes(results)
    return "\n".join(lines)


def _count_table(results: Results) -> list[str]:
    """A line of outcome counts per block, names aligned, then the totals."""
    blocks = results.blocks()
    width = max((len(b.name) for b in blocks), default=0)
    lines = [f"  {clean(block.name):<{width}}  {_count_line(block.counts, block.blocked)}" for block in blocks]
    lines.append(f"  {'total':<{width}}  {_count_line(results.counts(), len(results.blocked()))}")
    return lines


def _problem_lines(results: Results) -> list[str]:
    """The records that failed, were blocked or skipped, under a title each, the first few per group."""
    groups = (
        ("Failed", [r for r in results.records if r.outcome is Outcome.FAILED]),
        ("Blocked by errors", list(results.blocked())),
        ("Skipped", [r for r in results.records if r.outcome is Outcome.SKIPPED and not r.blocked]),
    )
    lines: list[str] = []
    for title, problems in groups:
        if not problems:
            continue
        lines.append(f"{title}:")
        for result in problems[:SHOWN_PER_OUTCOME]:
            status = f"HTTP {result.status}: " if result.status is not None else ""
            lines.append(f"  {clean(result.source)}  {clean(result.ref)}: {status}{clean(result.message or '')}")
        if len(problems) > SHOWN_PER_OUTCOME:
            lines.append(f"  ... and {len(problems) - SHOWN_PER_OUTCOME} more (see the results file)")
    return lines


def _notes(results: Results) -> list[str]:
    """What the run as a whole needs said: an interruption, and creates adopted instead of made."""
    lines: list[str] = []
    if results.interrupted:
        lines.append("Interrupted: records not yet sent were skipped; re-run to converge.")
    lost = sum(1 for r in results.records if r.adopted and r.message == ANSWER_LOST_ADOPTED)
    if lost:
        lines.append(f"{lost} create(s) {ANSWER_LOST_ADOPTED}: found under their key after the answer was lost.")
    found = sum(1 for r in results.records if r.adopted and r.message != ANSWER_LOST_ADOPTED)
    if found:
        lines.append(f"{found} create(s) found already made under their key (an earlier apply's) and adopted.")
    return lines
