"""The plan in a terminal: counts per block, then the changes with field diffs, then findings.

Colour only on a terminal (rich decides; NO_COLOR is honoured). Long blocks show their first
`limit` changed records and say how many more there are (`--report plan.md` has them all).
"""

from __future__ import annotations

import io
from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from loader.console import console as make_console
from loader.plan.digest import plan_digest
from loader.plan.model import Action, Plan, RecordPlan
from loader.report.masking import masked_plan
from loader.report.view import (
    action_word,
    all_findings,
    changed_records,
    counts,
    label,
    status_text,
    totals,
    value_text,
)

DEFAULT_LIMIT = 50
_STYLE = {"create": "green", "update": "yellow", "unchanged": "dim", "error": "red"}
_SIGN = {"create": "+", "update": "~", "unchanged": "=", "error": "✗"}


def render(plan: Plan, console: Console | None = None, *, limit: int = DEFAULT_LIMIT) -> None:
    """Print the plan (PII masked) to `console` (default: stdout)."""
    out = console or make_console()
    original, plan = plan, masked_plan(plan)
    out.print(_title(plan))
    out.print(f"Plan digest {plan_digest(original)} (for apply --expect-digest)")  # issue 13
    out.print(_counts_table(plan))
    for block in plan.blocks:
        records = changed_records(block)
        if not records:
            continue
        out.print()
        where = escape(_source(block.source_file, block.sheet))
        out.print(f"[bold]{escape(block.name)}[/bold] ({block.entity}) · {where}")
        for record in records[:limit]:
            for line in _record_lines(record):
                out.print(line)
        if len(records) > limit:
            out.print(f"  … and {len(records) - limit:,} more; write them all with --report plan.md")
    _findings(out, plan, "warning", "Warnings", "yellow", limit * 4)
    _findings(out, plan, "error", "Errors", "red", limit * 4)
    out.print()
    out.print(_summary_line(plan))


def render_text(plan: Plan, *, width: int = 120, limit: int = DEFAULT_LIMIT) -> str:
    """The same view as plain text, without colour (for logs, tests and `loader apply`)."""
    buffer = io.StringIO()
    render(plan, Console(file=buffer, width=width, no_color=True, color_system=None, highlight=False), limit=limit)
    return buffer.getvalue()


def _title(plan: Plan) -> str:
    version = f", API {plan.api_version}" if plan.api_version else ""
    return f"[bold]Plan[/bold] for environment [bold]{escape(plan.environment)}[/bold]{escape(version)}"


def _source(file: str, sheet: str | None) -> str:
    return f"{file} › {sheet}" if sheet else file


def _counts_table(plan: Plan) -> Table:
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("block")
    table.add_column("entity")
    for name in ("create", "update", "unchanged", "not in source", "warnings", "errors"):
        table.add_column(name, justify="right")
    for block in plan.blocks:
        c = counts(block)
        table.add_row(
            escape(block.name), block.entity, _n(c.create, "green"), _n(c.update, "yellow"), str(c.unchanged),
            str(c.not_in_source), _n(c.warnings, "yellow"), _n(c.errors, "red"),
        )
    return table


def _n(value: int, style: str) -> str:
    return f"[{style}]{value}[/{style}]" if value else "0"


def _record_lines(record: RecordPlan) -> Iterable[str]:
    word = action_word(record)
    style = _STYLE[word]
    extra = " [dim](blocked)[/dim]" if record.blocked and not record.errors else ""
    head = f"{_SIGN[word]} {word} {escape(label(record))}"
    yield f"  [{style}]{head}[/{style}]{extra}  [dim]{escape(record.source)}[/dim]"
    for change in record.changes:
        if record.action is Action.CREATE and change.old is None:
            yield f"      {escape(change.field)}: {escape(value_text(change.new))}"
        else:
            yield f"      {escape(change.field)}: {escape(value_text(change.old))} → {escape(value_text(change.new))}"
    if record.status_path:
        yield f"      status path: {escape(status_text(record))}"
    for dep in record.depends_on:
        yield f"      [dim]after {escape(dep)}[/dim]"


def _findings(out: Console, plan: Plan, severity: str, title: str, style: str, limit: int) -> None:
    found = [f for _, f in all_findings(plan) if f.severity == severity]
    if not found:
        return
    out.print()
    out.print(f"[bold {style}]{title}[/bold {style}] ({len(found)})")
    for f in found[:limit]:
        where = f"{f.where}: " if f.where else ""
        out.print(f"  [{style}]{'!' if severity == 'warning' else '✗'}[/{style}] {escape(where)}{escape(f.message)}")
    if len(found) > limit:
        out.print(f"  … and {len(found) - limit:,} more; write them all with --report plan.md")


def _summary_line(plan: Plan) -> str:
    t = totals(plan)
    parts = [f"{t.create} to create", f"{t.update} to update", f"{t.unchanged} unchanged",
             f"{t.not_in_source} not in source", f"{t.warnings} warnings", f"{t.errors} errors"]
    if t.errors:
        verdict = "[red]The plan has errors: records with errors (and what depends on them) will not be applied.[/red]"
    elif t.changed:
        verdict = "Run `loader apply` with the same mapping files to apply these changes."
    else:
        verdict = "[green]No changes: the service already matches the source.[/green]"
    return "Plan: " + ", ".join(parts) + ".\n" + verdict
