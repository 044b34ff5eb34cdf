"""The plan as Markdown for a pull request or a CI job summary.

Deterministic: no time in the body, stable order, so two reports of one plan are byte-identical
and a git diff of reports is a change of plan. The header names the environment, the API version
and the input fingerprints.

Organised by record (contract section 7): the summary with counts per block (records not managed
here are only counted), errors and warnings with their places, then the changes to existing
records of every block (its source file named once): the mapping lines that made them with how
many records each changed, the updates as one row per record with only `field: old → new`, the
records dropped from the source, the records and rows blocked by errors with why; and only then
the creates of every block: a profile of each field (its mapping line, records with a value,
empty, distinct values, the longest) and, folded in <details>, one row per record with a column
per field, at most CREATE_COLUMNS columns (the fields past them a line each in one cell), so a
pull-request comment shows the table whole. So no update of a live record is ever behind a
create. The count table has only the columns some block has; the changes by mapping line carry a
text bar each. Other tables over FOLD_OVER rows are folded in <details>.
Values longer than CELL_LIMIT are cut with the marker `…✂` (plan.json and the HTML report hold
them whole). Every value is escaped: in code spans (pipes escaped, backticks replaced) or as plain
text with Markdown and HTML specials escaped, control characters shown as escapes, so no cell can
break its table or inject HTML, links or a comment into a pull request.

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
from loader.plan.masking import HIDDEN, masked_plan
from loader.plan.model import BlockPlan, Plan, RecordPlan
from loader.report.markdown_parts import Table, fixed_size, layout, trimmable_size, trimmed
from loader.report.references import named_references
from loader.report.rules import SAMPLE_SIZE, RuleGroup, rule_groups, sample
from loader.report.view import (
    COUNT_NAMES,
    block_source,
    blocked_reason,
    blocked_records,
    cell_text,
    clean,
    conflicts_of,
    count_values,
    counts,
    create_columns,
    create_values,
    creates,
    cut,
    dropped_rows,
    findings_count,
    findings_of,
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
    value_text,
)
from loader.words import plural

PART_LIMIT = 65_536
FOLD_OVER = 20  # rows of a table above which it is folded in <details>
CREATE_COLUMNS = 6  # the creates table's columns at most: row, four fields, the other fields in one
BAR_WIDTH = 20  # the longest bar of the changes by mapping line, in characters
CELL_LIMIT = 200  # characters of one value in a cell; longer ones end in the cut marker
MESSAGE_LIMIT = 1_000  # characters of a finding's message in a cell
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
    made = [t for block in plan.blocks for t in _create_tables(block, named)]
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
    title = f"# Plan for `{_code(plan.environment)}`"
    if len(names) == 1:
        return f"{title}\n\n"
    if n == 1:
        shown = names if len(names) <= 6 else [*names[:2], "…", names[-1]]
        listed = ", ".join(name if name == "…" else f"`{_code(name)}`" for name in shown)
        return f"{title} (part 1 of {len(names)})\n\nThis report is split into {listed}.\n\n"
    return f"{title} (part {n} of {len(names)})\n\nThe summary is in `{_code(names[0])}`.\n\n"


def _summary(plan: Plan, digest: str) -> str:
    t = totals(plan)
    renumbers = f"{t.renumber} to renumber, " if t.renumber else ""
    lines = [
        f"- Environment: `{_code(plan.environment)}` (loader environment `{_code(plan.env_name)}`)",
        f"- API version: `{_code(plan.api_version or 'unknown')}`",
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
        lines.append(f"| {_cell(block.name)} | {_cell(block.entity)} | {values} |")
    lines += ["", "<details><summary>Input fingerprints</summary>", "", "| input | sha256 |", "|---|---|"]
    lines += [f"| `{_code(relative(path))}` | `{_code(digest.removeprefix('sha256:')[:16])}…` |"
              for path, digest in sorted(plan.fingerprints.items())]
    lines += ["", "</details>", ""]
    if not plan.has_changes and not plan.has_errors:
        lines += ["No changes: the service already matches the source.", ""]
    return "\n".join(lines) + "\n"


def _findings_tables(plan: Plan, severity: str, title: str) -> list[Table]:
    found = findings_of(plan, severity)
    if not found:
        return []
    rows = [f"| {_cell(where)} | {_cell(cut(message, MESSAGE_LIMIT))} |\n" for where, message, _ in found]
    fold = f"{len(found)} {title.lower()}" if len(found) > FOLD_OVER else None
    return [Table(f"## {title} ({findings_count(found)})\n\n", f"## {title}, continued\n\n",
                  "| where | what |\n|---|---|\n", rows, fold, trim=True, what=title.lower())]


def _conflict_tables(plan: Plan) -> list[Table]:
    """Conflicts after the errors: in full the first time, those shown before counted."""
    found, seen = conflicts_of(plan)
    if not found and not seen:
        return []
    rows = [f"| {_cell(where)} | {_cell(cut(text, MESSAGE_LIMIT))} |\n" for where, text in found]
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
    return heading + f"`{_code(block_source(block))}`: {summary_words(counts(block))}\n\n"


def _name(block: BlockPlan) -> str:
    return f"{_cell(block.name)} ({_cell(block.entity)})"


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
        tables.append(Table(f"#### Updates ({len(changing)})\n\n", f"#### {name}: updates, continued\n\n",
                            "| row | record | changes |\n|--:|---|---|\n", rows,
                            _fold(len(changing), "records to update"), trim=True, what="records to update"))
    if block.dropped:
        tables.append(_dropped_table(block, name))
    if blocked or block.blocked_rows:
        tables.append(_blocked_table(block, name, blocked))
    return [replace(tables[0], lead=_lead(block, named)), *tables[1:]]


def _dropped_table(block: BlockPlan, name: str) -> Table:
    """The records this block loaded before that its sheet no longer names (those not shown before)."""
    rows = [f"| `{_code(d.key)}` | {_cell(d.name)} | `{_code(d.id)}` | {_cell(d.last_loaded)} | {_cell(d.outcome)} |\n"
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
    rows = [f"| {_cell(row_cell(r, block))} | `{_code(label(r))}` | "
            f"{_cell(cut(blocked_reason(r), MESSAGE_LIMIT))} |\n" for r in blocked]
    rows += [f"| {_cell(short_place(b.source, block).removeprefix(_ROW))} | `{_code(key_label(b.key))}` | "
             f"{_cell(cut(row_reason(b), MESSAGE_LIMIT))} |\n" for b in block.blocked_rows]
    return Table(f"#### Blocked by errors ({len(rows)})\n\n", f"#### {name}: blocked, continued\n\n",
                 "| row | record | why |\n|---|---|---|\n", rows, _fold(len(rows), "blocked"), trim=True,
                 what="blocked records")


def _create_tables(block: BlockPlan, named: set[str]) -> list[Table]:
    """The creates by field (a profile of each), then every create (when they are cut short, a sample
    of them all follows)."""
    made = creates(block)
    if not made:
        return []
    name = _name(block)
    groups = [g for g in rule_groups(block, profiles=True) if g.kind == "create"]
    rows = [_profile_row(g) for g in groups]
    tables = [Table(f"#### Creates by field ({len(made)} records)\n\n", f"#### {name}: creates by field, continued\n\n",
                    "| mapping line | rule | with a value | empty | distinct | longest |\n|---|---|--:|--:|--:|---|\n",
                    rows, None)]
    fields = create_columns(made)
    with_notes = any(notes(r) for r in made)
    rest = len(fields) > CREATE_COLUMNS - 1 or with_notes  # the other fields (and notes) in one column
    columns = fields[:CREATE_COLUMNS - 2] if rest else fields
    others = "<br>".join([*(_cell(clean(c)) for c in fields[len(columns):]), *(["notes"] if with_notes else [])])
    head = "| row | " + " | ".join(_cell(clean(c)) for c in columns) + (f" | {others} |" if rest else " |")
    head += "\n|--:|" + "---|" * (len(columns) + rest) + "\n"
    rest_fields = fields[len(columns):] if rest else []
    rows = [_create_row(r, block, columns, rest_fields, rest) for r in made]
    shown = sample(made) if len(made) > SAMPLE_SIZE else []
    when_trimmed = "".join([
        f"A sample of {len(shown)} of all {len(made):,} (those with the smallest hashes of their keys):\n\n", head,
        *(_create_row(r, block, columns, rest_fields, rest) for r in shown), "\n"]) if shown else ""
    tables.append(Table(f"#### Creates ({len(made)})\n\n", f"#### {name}: creates, continued\n\n", head, rows,
                        f"{plural(len(made), 'record')} to create", trim=True,
                        what="records to create", when_trimmed=when_trimmed))
    return [replace(tables[0], lead=_lead(block, named)), *tables[1:]]


def _group_row(group: RuleGroup, most: int) -> str:
    """A mapping line's row: its records changed, as a number and as a bar beside the others'."""
    where = f"`{_code(group.place)}`" if group.place else ""
    example = ", ".join(f"`{_code(label(r))}`" for r in group.sample(3))
    bar = "█" * max(1, round(BAR_WIDTH * len(group.records) / most))
    return f"| {where} | {_cell(group.text)} | {len(group.records):,} | {bar} | {example} |\n"


def _profile_row(group: RuleGroup) -> str:
    where = f"`{_code(group.place)}`" if group.place else ""
    profile = group.profile
    if profile is None:
        return f"| {where} | {_cell(group.text)} | {len(group.records):,} |  |  |  |\n"
    distinct = HIDDEN if profile.distinct is None else f"{profile.distinct:,}"
    longest = f"`{_code(cut(profile.longest, CELL_LIMIT))}`" if profile.longest else ""
    return (f"| {where} | {_cell(group.text)} | {profile.with_value:,} | {profile.empty:,} | {distinct} | "
            f"{longest} |\n")


def _fold(n: int, what: str) -> str | None:
    return f"{n} {what}" if n > FOLD_OVER else None


def _create_row(record: RecordPlan, block: BlockPlan, columns: list[str], rest_fields: list[str], rest: bool) -> str:
    """A create's row: a cell per column (a masked value stays in its column), then, with `rest`, the
    values of `rest_fields` a line each in the header's order (`–` for none) and its notes, in one cell."""
    values = create_values(record)
    cells = [_value_cell(values[c].new) if c in values else "" for c in columns]
    if rest:
        lines = [(_value_cell(values[c].new) if c in values else "") or "–" for c in rest_fields]
        lines += [_cell(cut(n, MESSAGE_LIMIT)) for n in notes(record)]
        cells.append("<br>".join(lines))
    return f"| {_cell(row_cell(record, block))} | " + " | ".join(cells) + " |\n"


def _update_row(record: RecordPlan, block: BlockPlan) -> str:
    parts = [f"{_cell(clean(c.field))}: {_diff_value(c.old)} → {_diff_value(c.new)}" for c in record.changes]
    parts += [_cell(cut(n, MESSAGE_LIMIT)) for n in notes(record)]
    return f"| {_cell(row_cell(record, block))} | `{_code(label(record))}` | " + "<br>".join(parts) + " |\n"


def _value_cell(value: object) -> str:
    if value == HIDDEN:
        return HIDDEN
    text = cell_text(value)
    return f"`{_code(cut(text, CELL_LIMIT))}`" if text else ""


def _diff_value(value: object) -> str:
    text = value_text(value)
    return text if text == HIDDEN else f"`{_code(cut(text, CELL_LIMIT))}`"


def _code(text: str) -> str:
    """Text inside `code` spans: backticks and pipes cannot close the span or the table cell; one line."""
    return clean(text).replace("`", "'").replace("|", "\\|")


def _cell(text: str) -> str:
    """Plain text in a table cell, with Markdown and HTML specials escaped; one line."""
    out = clean(text).replace("\\", "\\\\").replace("|", "\\|")
    for special in "`*_[]<>#&~":
        out = out.replace(special, "\\" + special)
    return out
