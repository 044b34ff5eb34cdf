"""The plan in a terminal: the summary, errors and warnings, then per block its rule groups and records.

Colour only on a terminal (rich decides; NO_COLOR is honoured). Long lines are never wrapped
(soft wrap: a pipe or a CI log gets each line whole). Each block shows the mapping lines that made
its changes with their counts, then at most `limit` records with their field diffs, changes to
existing records first, records dropped from the source, then creates, and says how many more
there are (the HTML page has them all); records not managed here are counted.
Every text from the plan goes through `view.clean` (no escape code from a cell reaches the
terminal) and rich's markup escape.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from functools import partial

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from loader.console import console as make_console
from loader.plan.digest import shown_digest
from loader.plan.masking import masked_plan
from loader.plan.model import BlockedRow, BlockPlan, DroppedRecord, Plan, RecordPlan
from loader.report.rules import rule_groups
from loader.report.view import (
    COUNT_NAMES,
    block_source,
    blocked_reason,
    blocked_records,
    clean,
    conflicts_of,
    count_values,
    counts,
    creates,
    dropped_text,
    findings_count,
    findings_of,
    key_label,
    label,
    notes,
    record_place,
    row_reason,
    short_place,
    summary_words,
    totals,
    updates,
    value_text,
)

DEFAULT_LIMIT = 50


def render(plan: Plan, console: Console | None = None, *, limit: int = DEFAULT_LIMIT, applying: bool = False) -> None:
    """Print the plan (PII masked) to `console` (default: stdout).

    `applying`: printed by `loader apply` before it applies, so the closing line does not say to run it.
    """
    out = console or make_console()
    digest = shown_digest(plan)  # before masking: every value counts
    plan = masked_plan(plan)

    def say(text: str = "") -> None:
        out.print(text, soft_wrap=True)

    say(_title(plan))
    say(f"Plan digest {digest} (for apply --expect-digest)")
    out.print(_counts_table(plan))
    _findings(say, plan, "error", "Errors", "red", limit * 4)
    _conflicts(say, plan, limit * 4)
    _findings(say, plan, "warning", "Warnings", "yellow", limit * 4)
    for block in plan.blocks:
        lines = list(_block_lines(block, limit))
        if lines:
            say()
            say(f"[bold]{escape(clean(block.name))}[/bold] ({escape(block.entity)}) · {escape(block_source(block))}")
            for line in lines:
                say(line)
    say()
    say(_summary_line(plan, applying))


def render_text(plan: Plan, *, width: int = 120, limit: int = DEFAULT_LIMIT, applying: bool = False) -> str:
    """The same view as plain text, without colour (for logs, tests and `loader apply`)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, no_color=True, color_system=None, highlight=False)
    render(plan, console, limit=limit, applying=applying)
    return buffer.getvalue()


def _title(plan: Plan) -> str:
    version = f", API {plan.api_version}" if plan.api_version else ""
    return f"[bold]Plan[/bold] for environment [bold]{escape(clean(plan.environment))}[/bold]{escape(clean(version))}"


def _counts_table(plan: Plan) -> Table:
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("block", no_wrap=True)
    table.add_column("entity", no_wrap=True)
    for name in COUNT_NAMES:
        table.add_column(name, justify="right", no_wrap=True)
    styles = ("green", "yellow", "", "magenta", "", "red", "yellow", "red")
    for block in plan.blocks:
        values = count_values(counts(block))
        table.add_row(escape(clean(block.name)), block.entity, *(_n(v, s) for v, s in zip(values, styles, strict=True)))
    return table


def _n(value: int, style: str) -> str:
    return f"[{style}]{value}[/{style}]" if value and style else str(value)


def _block_lines(block: BlockPlan, limit: int) -> Iterable[str]:
    """The block's rule groups, then at most `limit` records: existing records first, creates last."""
    for group in rule_groups(block, profiles=False):
        style = "green" if group.kind == "create" else "yellow"
        where = f"[dim]{escape(group.place)}[/dim]  " if group.place else ""
        n = len(group.records)
        yield f"  {where}{escape(clean(group.text))}  [{style}]{n:,} record{'s' * (n != 1)} {group.verb}[/{style}]"
    items: list[Callable[[], Iterable[str]]] = [partial(_record_lines, "~", r, block) for r in updates(block)]
    items += [partial(_dropped_line, d) for d in block.dropped if not d.seen]
    items += [partial(_blocked_line, r, block) for r in blocked_records(block)]
    items += [partial(_blocked_row_line, row, block) for row in block.blocked_rows]
    items += [partial(_record_lines, "+", r, block) for r in creates(block)]
    for item in items[:limit]:
        yield from item()
    if len(items) > limit:
        yield f"  … and {len(items) - limit:,} more; write them all with --report plan.md or --html plan.html"
    if any(d.seen for d in block.dropped):
        yield f"  [dim]- {sum(d.seen for d in block.dropped):,} dropped from the source, shown before[/dim]"
    if block.not_in_source_records:
        yield (f"  [dim]? {block.not_in_source:,} not managed here: live records no mapping of this project loads "
               "(listed in plan.json and the HTML page)[/dim]")


def _dropped_line(dropped: DroppedRecord) -> Iterable[str]:
    yield (f"  [magenta]- dropped {escape(key_label(dropped.key))}[/magenta]  [dim]id {escape(clean(dropped.id))}, "
           f"last loaded {escape(dropped_text(dropped.last_loaded))}[/dim]  no longer in the sheet: retire it by hand")


def _blocked_line(record: RecordPlan, block: BlockPlan) -> Iterable[str]:
    yield (f"  [red]✗ blocked {escape(label(record))}[/red]  [dim]{escape(record_place(record, block))}[/dim]  "
           f"{escape(blocked_reason(record))}")


def _blocked_row_line(row: BlockedRow, block: BlockPlan) -> Iterable[str]:
    where = short_place(row.source, block)
    yield f"  [red]✗ blocked {escape(key_label(row.key))}[/red]  [dim]{escape(where)}[/dim]  {escape(row_reason(row))}"


def _record_lines(sign: str, record: RecordPlan, block: BlockPlan) -> Iterable[str]:
    style = "green" if sign == "+" else "yellow"
    word = "create" if sign == "+" else "retire" if record.retiring else "update" if record.changes \
        else "status move" if record.status_path else "kept platform edit"
    shown = label(record)
    if record.renamed_from is not None and sign != "+":  # a renumber: the key it leaves, and the one it takes
        word, shown = "renumber", f"{'/'.join(str(k) for k in record.renamed_from)} → {shown}"
    where = escape(record_place(record, block))
    yield f"  [{style}]{sign} {word} {escape(shown)}[/{style}]  [dim]{where}[/dim]"
    for change in record.changes:
        if sign == "+" and change.old is None:
            yield f"      {escape(clean(change.field))}: {escape(value_text(change.new))}"
        else:
            yield (f"      {escape(clean(change.field))}: {escape(value_text(change.old))} → "
                   f"{escape(value_text(change.new))}")
    for note in notes(record):
        yield f"      {escape(note)}"


def _findings(say: Callable[..., None], plan: Plan, severity: str, title: str, style: str, limit: int) -> None:
    found = findings_of(plan, severity)
    if not found:
        return
    say()
    say(f"[bold {style}]{title}[/bold {style}] ({findings_count(found)})")
    for where, message, _ in found[:limit]:
        at = f"{where}: " if where else ""
        say(f"  [{style}]{'!' if severity == 'warning' else '✗'}[/{style}] {escape(at)}{escape(message)}")
    if len(found) > limit:
        say(f"  … and {len(found) - limit:,} more; write them all with --report plan.md")


def _conflicts(say: Callable[..., None], plan: Plan, limit: int) -> None:
    """Conflicts, after the errors: each field held, in full the first time; those shown before, counted."""
    found, seen = conflicts_of(plan)
    if not found and not seen:
        return
    say()
    say(f"[bold red]Conflicts[/bold red] ({len(found) + seen})")
    for where, text in found[:limit]:
        say(f"  [red]≠[/red] {escape(where)}: {escape(text)}")
    if len(found) > limit:
        say(f"  … and {len(found) - limit:,} more; write them all with --report plan.md")
    if seen:
        say(f"  [dim]{seen:,} shown before (unchanged since)[/dim]")


def _summary_line(plan: Plan, applying: bool) -> str:
    t = totals(plan)
    if t.errors:
        verdict = "[red]The plan has errors: records with errors (and what depends on them) will not be applied.[/red]"
    elif t.changed and not applying:
        verdict = "Run `loader apply` with the same mapping files to apply these changes."
    elif t.changed or plan.has_changes:
        verdict = ""
    else:
        verdict = "[green]No changes: the service already matches the source.[/green]"
    return f"Plan: {summary_words(t)}." + (f"\n{verdict}" if verdict else "")
