"""The plan as Markdown for a pull request or a CI job summary.

Deterministic: no time in the body, stable order, so two reports of one plan are byte-identical
and a git diff of reports is a change of plan. The header names the environment, the API version
and the input fingerprints.

Organised by record (contract section 7): the summary with counts per block (records not managed
here are only counted), errors and warnings with their places, then the changes to existing
records of every block (its source file named once): the mapping lines that made them with how
many records each changed, the updates as one row per record with only `field: old → new`, the
records dropped from the source, the records and rows blocked by errors with why; and only then
the creates of every block (`loader.report.markdown_creates`: a profile of each field and, folded
in <details>, one row per record). So no update of a live record is ever behind a create. The
count table has only the columns some block has; the changes by mapping line carry a text bar
each. Other tables over FOLD_OVER rows are folded in <details>. Every value is escaped and cut
short as `loader.report.markdown_text` says (plan.json and the HTML report hold them whole), so no
cell can break its table or inject HTML, links or a comment into a pull request.

A report longer than a pull-request comment allows (65,536 characters) is split into two parts
(plan.md, plan.part2.md), each complete Markdown, the summary in the first; never more: the rows
that do not fit are left out, in order from the end, and under a table cut short the report says
how many more there are and that the HTML report and plan.json list them all; creates cut short
are followed by a sample of them all (the records with the smallest hashes of their keys, so the
sample does not churn from plan to plan). A plan with nothing to do is the summary alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from loader.files.safe_write import write_text
from loader.plan.digest import shown_digest
from loader.plan.masking import masked_plan
from loader.plan.model import BlockPlan, Plan, RecordPlan
from loader.report.markdown_creates import create_tables
from loader.report.markdown_parts import Table, fixed_size, layout, trimmable_size, trimmed
from loader.report.markdown_text import MESSAGE_LIMIT, cell, code, diff_value
from loader.report.references import named_references
from loader.report.rules import RuleGroup, rule_groups
from loader.report.shown_findings import findings_count, findings_of
from loader.report.view import (
    COUNT_NAMES,
    block_source,
    blocked_reason,
    blocked_records,
    clean,
    conflicts_of,
    count_values,
    counts,
    cut,
    dropped_rows,
    key_label,
    label,
    notes,
    relative,
    row_cell,
    row_reason,
    short_place,
    shown_columns,
    summary_words,
    totals,
    updates,
    updates_words,
)

PART_LIMIT = 65_536
FOLD_OVER = 20  # rows of a table above which it is folded in <details>
BAR_WIDTH = 20  # the longest bar of the changes by mapping line, in characters
_RESERVE = 1_024  # room kept in each part for its heading and the list of parts
_ROW = "row "
MAX_PARTS = 2  # a report of any size: at most this many parts (contract section 7)


def render_parts(plan: Plan, *, limit: int = PART_LIMIT, file_name: str = "plan.md") -> list[str]:
    """The report as one or two complete Markdown documents, each at most `limit` characters.

    Every record when that fits in two parts; else the creates of a block by field (a profile of
    each) and a sample, and as many other rows as fit. `file_name` is the first part's file name;
    the first part lists the others by name.
    """
    digest = shown_digest(plan)  # before masking: every value counts
    plan = named_references(masked_plan(plan))
    budget = max(limit - _RESERVE, 1_000)
    summary = _summary(plan, digest)
    tables = _tables(plan)
    parts = layout(summary, tables, budget)
    if len(parts) > MAX_PARTS:
        parts = _condensed(tables, summary, budget)
    names = [p.name for p in part_paths(Path(file_name), len(parts))]
    return [_part_heading(plan, n, names) + "".join(texts) for n, texts in enumerate(parts, start=1)]


def _condensed(tables: list[Table], summary: str, budget: int) -> list[list[str]]:
    """As many rows as fit in two parts, in order; under a table cut short, how many more and where."""
    allowance = min(trimmable_size(tables), MAX_PARTS * budget - len(summary) - fixed_size(tables))
    while True:
        parts = layout(summary, trimmed(tables, allowance), budget)
        if len(parts) <= MAX_PARTS or allowance <= 0:
            return parts
        allowance = allowance * 4 // 5 - 1_000


def _tables(plan: Plan) -> list[Table]:
    """Errors, warnings, the changes to existing records of every block, then the creates of every block."""
    tables = _findings_tables(plan, "error", "Errors") + _conflict_tables(plan) \
        + _findings_tables(plan, "warning", "Warnings")
    named: set[str] = set()
    existing = [t for block in plan.blocks for t in _existing_tables(block, named)]
    if existing:
        tables += [replace(existing[0], lead="## Changes to existing records\n\n" + existing[0].lead), *existing[1:]]
    made = [t for block in plan.blocks for t in _led(create_tables(block, _name(block)), block, named)]
    if made:
        tables += [replace(made[0], lead="## Creates\n\n" + made[0].lead), *made[1:]]
    return tables


def render(plan: Plan) -> str:
    """The whole report as one document (no splitting)."""
    return render_parts(plan, limit=10**12)[0]


def part_paths(path: Path, count: int) -> list[Path]:
    """plan.md, plan.part2.md, plan.part3.md, ..."""
    return [path] + [path.with_name(f"{path.stem}.part{n}{path.suffix}") for n in range(2, count + 1)]


def write_markdown(plan: Plan, path: Path, *, limit: int = PART_LIMIT) -> list[Path]:
    """Write the report (split into parts when long); returns the files written."""
    documents = render_parts(plan, limit=limit, file_name=path.name)
    paths = part_paths(path, len(documents))
    for target, text in zip(paths, documents, strict=True):
        write_text(target, text)  # masked, but unmarked personal data may be there
    # Parts left by an earlier, longer report would read as part of this one.
    for stale in path.parent.glob(f"{path.stem}.part*{path.suffix}"):
        number = stale.name[len(path.stem) + len(".part"):-len(path.suffix) or None]
        if number.isdigit() and int(number) > len(documents):
            stale.unlink()
    return paths


# ---- pieces --------------------------------------------------------------------------------


def _part_heading(plan: Plan, n: int, names: list[str]) -> str:
    title = f"# Plan for `{code(plan.environment)}`"
    if len(names) == 1:
        return f"{title}\n\n"
    if n == 1:
        shown = names if len(names) <= 6 else [*names[:2], "…", names[-1]]
        listed = ", ".join(name if name == "…" else f"`{code(name)}`" for name in shown)
        return f"{title} (part 1 of {len(names)})\n\nThis report is split into {listed}.\n\n"
    return f"{title} (part {n} of {len(names)})\n\nThe summary is in `{code(names[0])}`.\n\n"


def _summary(plan: Plan, digest: str) -> str:
    t = totals(plan)
    renumbers = f"{t.renumber} to renumber, " if t.renumber else ""
    lines = [
        f"- Environment: `{code(plan.environment)}` (loader environment `{code(plan.env_name)}`)",
        f"- API version: `{code(plan.api_version or 'unknown')}`",
        f"- Plan digest: `{digest}` (what `loader apply --expect-digest` takes)",
        f"- Result: **{renumbers}{t.create} to create, {t.update} to update**, "
        + summary_words(t).split(" to update, ", 1)[1],
        "",
    ]
    rows = [count_values(counts(block)) for block in plan.blocks]
    kept = shown_columns(rows)  # the columns some block has: a comment's width holds them
    lines += ["| block | entity | " + " | ".join(COUNT_NAMES[n] for n in kept) + " |", "|---|---|" + "--:|" * len(kept)]
    for block, row in zip(plan.blocks, rows, strict=True):
        values = " | ".join(f"{row[n]:,}" for n in kept)
        lines.append(f"| {cell(block.name)} | {cell(block.entity)} | {values} |")
    lines += ["", "<details><summary>Input fingerprints</summary>", "", "| input | sha256 |", "|---|---|"]
    lines += [f"| `{code(relative(path))}` | `{code(digest.removeprefix('sha256:')[:16])}…` |"
              for path, digest in sorted(plan.fingerprints.items())]
    lines += ["", "</details>", ""]
    if not plan.has_changes and not plan.has_errors:
        lines += ["No changes: the service already matches the source.", ""]
    return "\n".join(lines) + "\n"


def _findings_tables(plan: Plan, severity: str, title: str) -> list[Table]:
    found = findings_of(plan, severity)
    if not found:
        return []
    rows = [f"| {cell(where)} | {cell(cut(message, MESSAGE_LIMIT))} |\n" for where, message, _ in found]
    fold = f"{len(found)} {title.lower()}" if len(found) > FOLD_OVER else None
    return [Table(f"## {title} ({findings_count(found)})\n\n", f"## {title}, continued\n\n",
                  "| where | what |\n|---|---|\n", rows, fold, trim=True, what=title.lower())]


def _conflict_tables(plan: Plan) -> list[Table]:
    """Conflicts after the errors: in full the first time, those shown before counted."""
    found, seen = conflicts_of(plan)
    if not found and not seen:
        return []
    rows = [f"| {cell(where)} | {cell(cut(text, MESSAGE_LIMIT))} |\n" for where, text in found]
    before = f"{seen} shown before (unchanged since).\n\n" if seen else ""
    return [Table(f"## Conflicts ({len(found) + seen})\n\nEach field held (not written); the record's other changes "
                  f"go ahead.\n\n{before}", "## Conflicts, continued\n\n", "| record | what |\n|---|---|\n", rows,
                  _fold(len(rows), "conflicts"), trim=True, what="conflicts")]


def _lead(block: BlockPlan, named: set[str]) -> str:
    """The block's heading; the first time, with its source and counts (the source is named once)."""
    heading = f"### {_name(block)}\n\n"
    if block.name in named:
        return heading
    named.add(block.name)
    return heading + f"`{code(block_source(block))}`: {summary_words(counts(block))}\n\n"


def _name(block: BlockPlan) -> str:
    return f"{cell(block.name)} ({cell(block.entity)})"


def _existing_tables(block: BlockPlan, named: set[str]) -> list[Table]:
    """Rule groups of the updates, the updates, records dropped from the source, records blocked by errors."""
    changing, blocked = updates(block), blocked_records(block)
    if not (changing or blocked or block.blocked_rows or block.dropped):
        return []
    name = _name(block)
    tables: list[Table] = []
    groups = [g for g in rule_groups(block, profiles=False) if g.kind == "update"]
    if groups:
        most = max(len(g.records) for g in groups)
        rows = [_group_row(g, most) for g in groups]
        tables.append(Table("#### Changes by mapping line\n\n", f"#### {name}: changes by mapping line, continued\n\n",
                            "| mapping line | rule | records changed | | for example |\n|---|---|--:|---|---|\n", rows,
                            None))
    if changing:
        rows = [_update_row(r, block) for r in changing]
        tables.append(Table(f"#### Updates: {updates_words(changing)}\n\n", f"#### {name}: updates, continued\n\n",
                            "| row | record | changes |\n|--:|---|---|\n", rows,
                            _fold(len(changing), "records to update"), trim=True, what="records to update"))
    if block.dropped:
        tables.append(_dropped_table(block, name))
    if blocked or block.blocked_rows:
        tables.append(_blocked_table(block, name, blocked))
    return [replace(tables[0], lead=_lead(block, named)), *tables[1:]]


def _dropped_table(block: BlockPlan, name: str) -> Table:
    """The records this block loaded before that its sheet no longer names (those not shown before)."""
    rows = [f"| `{code(d.key)}` | {cell(d.name)} | `{code(d.id)}` | {cell(d.last_loaded)} | {cell(d.outcome)} |\n"
            for d in dropped_rows(block)]
    before = len(block.dropped) - len(rows)
    return Table(
        f"#### Dropped from the source ({len(block.dropped)})\n\n"
        "Loaded by this block before, no longer in its sheet (no delete: where nothing is written, retire by hand)."
        + (f" {before} shown before." if before else "") + "\n\n", f"#### {name}: dropped, continued\n\n",
        "| key | name | id | last loaded | outcome |\n|---|---|---|---|---|\n", rows, _fold(len(rows), "dropped"),
        trim=True, what="dropped records")


def _blocked_table(block: BlockPlan, name: str, blocked: Sequence[RecordPlan]) -> Table:
    """The records and rows blocked by errors, with why."""
    rows = [f"| {cell(row_cell(r, block))} | `{code(label(r))}` | "
            f"{cell(cut(blocked_reason(r), MESSAGE_LIMIT))} |\n" for r in blocked]
    rows += [f"| {cell(short_place(b.source, block).removeprefix(_ROW))} | `{code(key_label(b.key))}` | "
             f"{cell(cut(row_reason(b), MESSAGE_LIMIT))} |\n" for b in block.blocked_rows]
    return Table(f"#### Blocked by errors ({len(rows)})\n\n", f"#### {name}: blocked, continued\n\n",
                 "| row | record | why |\n|---|---|---|\n", rows, _fold(len(rows), "blocked"), trim=True,
                 what="blocked records")


def _led(tables: list[Table], block: BlockPlan, named: set[str]) -> list[Table]:
    """The block's tables, the first led by the block's heading (`_lead`)."""
    return [replace(tables[0], lead=_lead(block, named)), *tables[1:]] if tables else []


def _group_row(group: RuleGroup, most: int) -> str:
    """A mapping line's row: its records changed, as a number and as a bar beside the others'."""
    where = f"`{code(group.place)}`" if group.place else ""
    example = ", ".join(f"`{code(label(r))}`" for r in group.sample(3))
    bar = "█" * max(1, round(BAR_WIDTH * len(group.records) / most))
    return f"| {where} | {cell(group.text)} | {len(group.records):,} | {bar} | {example} |\n"


def _fold(n: int, what: str) -> str | None:
    return f"{n} {what}" if n > FOLD_OVER else None


def _update_row(record: RecordPlan, block: BlockPlan) -> str:
    parts = [f"{cell(clean(c.field))}: {diff_value(c.old)} → {diff_value(c.new)}" for c in record.changes]
    parts += [cell(cut(n, MESSAGE_LIMIT)) for n in notes(record)]
    return f"| {cell(row_cell(record, block))} | `{code(label(record))}` | " + "<br>".join(parts) + " |\n"


