"""The plan in a terminal: counts per block, errors, conflicts and warnings, each block's changes,
and a closing line that says what to do next.

Made to read at 80 columns: below `TABLE_WIDTH` the counts are one line per block with zero counts
left out (`subjects  3 create · 1 update · 10 unchanged · 2 warnings`), above it a table of the
columns some block has; on a terminal every line wraps between words under its own text (a hanging
indent), while a pipe or a CI log gets each line whole (`wrap=False`), so a place is never split.
Each block lists its rule lines and its rows (`loader.report.terminal_rows`: a quota per kind of
row, so no kind of change is hidden). A plan with nothing to write and nothing to say is three
lines. The closing line carries the digest: the command that applies exactly this plan, or what
is held back (`loader.report.held`) when nothing is written. Colour only on a terminal (rich
decides; NO_COLOR is honoured). Every text from the plan goes through `view.clean` (no escape code
from a cell reaches the terminal) and rich's markup escape.
"""

from __future__ import annotations

import io
import shlex
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from loader.console import console as make_console
from loader.plan.digest import shown_digest
from loader.plan.editors import without_emails
from loader.plan.masking import masked_plan
from loader.plan.model import Plan
from loader.report.held import held_words
from loader.report.references import named_references
from loader.report.shown_findings import findings_count, findings_of
from loader.report.terminal_rows import Line, block_lines
from loader.report.view import (
    COUNT_NAMES,
    HELD_COLUMNS,
    BlockCounts,
    block_source,
    clean,
    conflicts_of,
    count_values,
    counts,
    shown_columns,
    totals,
)
from loader.words import plural

DEFAULT_LIMIT = 50
TABLE_WIDTH = 100  # narrower terminals get the counts as a line per block
# Of COUNT_NAMES, in order: the colour, the word in a block's line, the word in the closing line.
_STYLES = ("cyan", "green", "yellow", "", "magenta", "", "", "red", "red", "yellow", "red")
_NOUNS = ("renumber", "create", "update", "unchanged", "dropped", "not managed here", "kept edit", "conflict",
          "blocked", "warning", "error")
_VERBS = ("to renumber", "to create", "to update", "unchanged", "dropped from the source", "not managed here",
          "kept edit", "conflict", "blocked", "warning", "error")
_PLURAL = frozenset({"kept edit", "conflict", "warning", "error"})  # the other words read the same for any count


def render(plan: Plan, console: Console | None = None, *, limit: int = DEFAULT_LIMIT, applying: bool = False,
           apply_command: Sequence[str] = (), wrap: bool | None = None) -> None:
    """Print the plan (PII masked) to `console` (default: stdout).

    `applying`: printed by `loader apply` before it applies (or of a saved or revert plan, applied with
    `--plan`), so the closing line gives the digest and does not propose a command.
    `apply_command`: the `loader apply …` words (without the digest) the closing line proposes.
    `wrap`: wrap long lines at the console's width (default: when the console is a terminal).
    """
    out = console or make_console()
    digest = shown_digest(plan)  # before masking: every value counts
    plan = named_references(without_emails(masked_plan(plan)))  # e-mail addresses only in files written 0600
    folded = out.is_terminal if wrap is None else wrap
    for line in plan_lines(plan, digest, width=out.width, limit=limit, applying=applying,
                           apply_command=apply_command):
        if isinstance(line, Table):
            out.print(line)
        else:
            _print(out, line, folded)


def render_text(plan: Plan, *, width: int = 120, limit: int = DEFAULT_LIMIT, applying: bool = False,
                apply_command: Sequence[str] = ()) -> str:
    """The view as a terminal `width` columns wide shows it, without colour (for tests and logs)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, no_color=True, color_system=None, highlight=False)
    render(plan, console, limit=limit, applying=applying, apply_command=apply_command, wrap=True)
    return buffer.getvalue()


def plan_lines(plan: Plan, digest: str, *, width: int, limit: int, applying: bool,
               apply_command: Sequence[str]) -> list[Line | Table]:
    """Every line of the view, in order (the counts as a table on a wide terminal)."""
    title = Line("", _title(plan))
    if _nothing_to_say(plan):
        t = totals(plan)
        return [title, Line("No changes: ", f"{_words(t, verbs=True)}."), _digest_line(digest, width)]
    lines: list[Line | Table] = [title]
    if width >= TABLE_WIDTH:
        lines.append(_counts_table(plan))
    else:
        lines += _count_lines(plan)
    lines += _findings(plan, "error", "Errors", "red", limit * 4)
    lines += _conflicts(plan, limit * 4)
    lines += _findings(plan, "warning", "Warnings", "yellow", limit * 4)
    for block in plan.blocks:
        shown = block_lines(block, limit)
        if shown:
            lines += [Line("", ""), Line("", f"[bold]{escape(clean(block.name))}[/bold] ({escape(block.entity)}) · "
                                             f"{escape(block_source(block))}")]
            lines += shown
    return [*lines, Line("", ""), *_closing(plan, _digest_line(digest, width), applying, apply_command)]


def _digest_line(digest: str, width: int) -> Line:
    """`Plan digest sha256:…`, or `digest sha256:…` where that would not fit: the digest is never split."""
    label = "Plan digest " if width >= len("Plan digest ") + len(digest) else "digest "
    return Line("", f"{label}{digest}")


def _print(out: Console, line: Line, wrap: bool) -> None:
    """One line: whole (soft wrap) for a pipe; on a terminal wrapped between words under its text."""
    if not wrap:
        out.print(line.prefix + line.text, soft_wrap=True)
        return
    head = Text.from_markup(line.prefix)
    indent = head.cell_len
    body = Text.from_markup(line.text)
    for n, part in enumerate(body.wrap(out, max(out.width - indent, 20)) if body.plain else [Text()]):
        part.rstrip()
        out.print(Text.assemble(head if n == 0 else " " * indent, part), soft_wrap=True)


def _nothing_to_say(plan: Plan) -> bool:
    """A plan that writes nothing, holds nothing and finds nothing: its view is three lines."""
    t = totals(plan)
    return not (plan.has_changes or t.changed or t.errors or t.warnings or t.blocked or held_words(plan)
                or any(not d.seen for b in plan.blocks for d in b.dropped))


def _title(plan: Plan) -> str:
    version = f", API {plan.api_version}" if plan.api_version else ""
    return f"[bold]Plan[/bold] for environment [bold]{escape(clean(plan.environment))}[/bold]{escape(clean(version))}"


def _words(c: BlockCounts, *, verbs: bool = False) -> str:
    """The counts that are not zero, `3 create · 1 update · 1 kept edit · 2 warnings`, coloured. With
    `verbs` (the closing line) kept edits and conflicts are left out: the held words say them."""
    words = []
    for n, (value, noun, style) in enumerate(zip(count_values(c), _VERBS if verbs else _NOUNS, _STYLES, strict=True)):
        if value and not (verbs and n in HELD_COLUMNS):
            word = plural(value, noun, None if noun in _PLURAL else noun)
            words.append(f"[{style}]{word}[/{style}]" if style else word)
    return " · ".join(words) or "nothing"


def _count_lines(plan: Plan) -> list[Line | Table]:
    """A line per block, names aligned: `subjects  3 create · 1 update · 10 unchanged · 2 warnings`."""
    width = max((len(clean(b.name)) for b in plan.blocks), default=0)
    return [Line(f"{escape(clean(b.name)):<{width}}  ", _words(counts(b))) for b in plan.blocks]


def _counts_table(plan: Plan) -> Table:
    """Block, entity and the counts some block has (create, update and unchanged always)."""
    rows = [count_values(counts(b)) for b in plan.blocks]
    kept = shown_columns(rows)
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("block", no_wrap=True)
    table.add_column("entity", no_wrap=True)
    for n in kept:
        table.add_column(COUNT_NAMES[n], justify="right", no_wrap=True)
    for block, row in zip(plan.blocks, rows, strict=True):
        table.add_row(escape(clean(block.name)), block.entity, *(_n(row[n], _STYLES[n]) for n in kept))
    return table


def _n(value: int, style: str) -> str:
    return f"[{style}]{value:,}[/{style}]" if value and style else f"{value:,}"


def _findings(plan: Plan, severity: str, title: str, style: str, limit: int) -> list[Line | Table]:
    found = findings_of(plan, severity)
    if not found:
        return []
    mark = "!" if severity == "warning" else "✗"
    heading = f"[bold {style}]{title}[/bold {style}] ({findings_count(found)})"
    lines: list[Line | Table] = [Line("", ""), Line("", heading)]
    for where, message, _ in found[:limit]:
        at = f"{where}: " if where else ""
        lines.append(Line(f"  [{style}]{mark}[/{style}] ", f"{escape(at)}{escape(message)}"))
    if len(found) > limit:
        lines.append(Line("  … ", f"and {len(found) - limit:,} more; write them all with --report plan.md"))
    return lines


def _conflicts(plan: Plan, limit: int) -> list[Line | Table]:
    """Conflicts, after the errors: each field held, in full the first time; those shown before, counted."""
    found, seen = conflicts_of(plan)
    if not found and not seen:
        return []
    lines: list[Line | Table] = [Line("", ""), Line("", f"[bold red]Conflicts[/bold red] ({len(found) + seen:,})")]
    lines += [Line("  [red]≠[/red] ", f"{escape(where)}: {escape(text)}") for where, text in found[:limit]]
    if len(found) > limit:
        lines.append(Line("  … ", f"and {len(found) - limit:,} more; write them all with --report plan.md"))
    if seen:
        lines.append(Line("  ", f"[dim]{seen:,} shown before (unchanged since)[/dim]"))
    return lines


def _closing(plan: Plan, digest: Line, applying: bool, apply_command: Sequence[str]) -> list[Line]:
    """The totals and what is held, then what to do: the command that applies this plan, with its digest."""
    t = totals(plan)
    held = held_words(plan)
    if not (t.changed or plan.has_changes or t.errors):
        return [Line("", f"No changes to write{'; ' + escape(held) if held else ''}."),
                Line("Plan: ", f"{_words(t, verbs=True)}."), digest]
    lines = [Line("Plan: ", f"{_words(t, verbs=True)}{'; ' + escape(held) if held else ''}.")]
    if t.errors:
        lines.append(Line("", "[red]The plan has errors: records with errors (and what depends on them) will not "
                              "be applied.[/red]"))
    if applying or t.errors:
        return [*lines, digest]
    words = list(apply_command) or ["loader", "apply", "MAPPING..."]
    command = escape(shlex.join([*words, "--expect-digest", digest.text.rpartition(" ")[2]]))
    return [*lines, Line("", "Apply exactly this plan:"), Line("  ", f"[bold]{command}[/bold]")]
