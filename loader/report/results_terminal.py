"""The terminal summary of an apply: counts per block, then what failed or was skipped and why, then
how long it took, the apply's id and the command that undoes it (`loader revert`)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from loader.apply.results import ANSWER_LOST_ADOPTED, OUTCOMES, Outcome, Results
from loader.report.view import clean
from loader.words import plural

SHOWN_PER_OUTCOME = 20


def _count_line(counts: Mapping[Outcome, int], blocked: int) -> str:
    words = [f"{counts.get(o, 0):,} {o.value}" for o in OUTCOMES]
    if blocked:
        words[OUTCOMES.index(Outcome.SKIPPED)] += f" ({blocked:,} blocked by errors)"
    return ", ".join(words)


def render_results(results: Results) -> str:
    """Plain text (the command may colour it): one line per block, then a line per problem."""
    lines = [f"Applied to {results.environment} ({results.env_name}):"]
    lines += _count_table(results)
    lines += _problem_lines(results)
    lines += _notes(results)
    lines += _closing(results)
    return "\n".join(lines)


def _closing(results: Results) -> list[str]:
    """`Done in 3.2 s; apply 20261125T143103Z-d532fb, undo: loader revert --env test --apply …`."""
    took = f"Done in {_duration(results.elapsed_s)}" if results.elapsed_s is not None else "Done"
    if results.apply_id is None:
        return [f"{took}; nothing was written, so there is nothing to undo." if not _wrote(results) else f"{took}."]
    undo = shlex.join(["loader", "revert", "--env", results.env_name, "--apply", results.apply_id])
    return [f"{took}; apply {results.apply_id}", f"  undo: {undo}  (makes a revert plan to review)"]


def _wrote(results: Results) -> bool:
    return any(r.outcome in (Outcome.CREATED, Outcome.UPDATED) for r in results.records)


def _duration(seconds: float) -> str:
    """`0.4 s`, `12 s`, `3 min 05 s`, `1 h 02 min`."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


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
            lines.append(f"  … and {len(problems) - SHOWN_PER_OUTCOME:,} more (see the results file)")
    return lines


def _notes(results: Results) -> list[str]:
    """What the run as a whole needs said: an interruption, and creates adopted instead of made."""
    lines: list[str] = []
    if results.interrupted:
        lines.append("Interrupted: records not yet sent were skipped; re-run to converge.")
    lost = sum(1 for r in results.records if r.adopted and r.message == ANSWER_LOST_ADOPTED)
    if lost:
        lines.append(f"{plural(lost, 'create')} {ANSWER_LOST_ADOPTED}: found under their key after the answer "
                     "was lost.")
    found = sum(1 for r in results.records if r.adopted and r.message != ANSWER_LOST_ADOPTED)
    if found:
        lines.append(f"{plural(found, 'create')} found already made under their key (an earlier apply's) "
                     "and adopted.")
    return lines
