"""The plan as Markdown for a pull request or a CI job summary.

Deterministic: no time in the body, stable order, so two reports of one plan are byte-identical
and a git diff of reports is a change of plan. The header names the environment, the API version
and the input fingerprints.

Organised by record (contract section 7): the summary with counts per block, errors and warnings
with their places, then per block (its source file named once) the creates as one row per record
with a column per field, the updates as one row per record with only `field: old → new`, the
records and rows blocked by errors with why, and the records not in the source by key and id
(folded). Tables over FOLD_OVER rows are folded in <details>. Values longer than CELL_LIMIT are cut
with the marker `…✂` (plan.json and the HTML report hold them whole). Every value is escaped: in
code spans (pipes escaped, backticks replaced) or as plain text with Markdown and HTML specials
escaped, control characters shown as escapes, so no cell can break its table or inject HTML,
links or a comment into a pull request.

A report longer than a pull-request comment allows (65,536 characters) is split into numbered
parts (plan.md, plan.part2.md, ...), each complete Markdown, the summary in the first. A single
table row too long for a part is cut, with a note saying so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from loader.files.private import write_private_text
from loader.plan.digest import shown_digest
from loader.plan.masking import HIDDEN, masked_plan
from loader.plan.model import BlockPlan, Plan, RecordPlan
from loader.report.view import (
    COUNT_NAMES,
    block_source,
    blocked_reason,
    blocked_records,
    cell_text,
    clean,
    count_values,
    counts,
    create_columns,
    create_values,
    creates,
    cut,
    findings_of,
    key_label,
    label,
    notes,
    relative,
    row_cell,
    row_reason,
    short_place,
    summary_words,
    totals,
    updates,
    value_text,
)

PART_LIMIT = 65_536
FOLD_OVER = 20  # rows of a table above which it is folded in <details>
CELL_LIMIT = 200  # characters of one value in a cell; longer ones end in the cut marker
MESSAGE_LIMIT = 1_000  # characters of a finding's message in a cell
_RESERVE = 1_024  # room kept in each part for its heading and the list of parts
_CUT = " … (cut: too long for this report; the full text is in plan.json and the HTML report) |\n"


@dataclass(frozen=True)
class _Table:
    """A table the parts are cut from: each piece complete, `heading` on the first, `continued` on the others.

    `lead` (a block's heading) goes before the first piece, so no part ends on a bare heading.
    """

    heading: str
    continued: str
    head: str
    rows: list[str]
    fold: str | None
    lead: str = ""


_ROW = "row "


def render_parts(plan: Plan, *, limit: int = PART_LIMIT, file_name: str = "plan.md") -> list[str]:
    """The report as one or more complete Markdown documents, each at most `limit` characters.

    `file_name` is the first part's file name; the first part lists the others by name.
    """
    digest = shown_digest(plan)  # before masking: every value counts
    plan = masked_plan(plan)
    budget = max(limit - _RESERVE, 1_000)
    summary = _summary(plan, digest)
    tables = _findings_tables(plan, "error", "Errors") + _findings_tables(plan, "warning", "Warnings")
    tables += [t for block in plan.blocks for t in _block_tables(block)]
    parts: list[list[str]] = [[summary]]
    size = len(summary)
    for table in tables:
        fixed = len(table.lead) + max(len(table.heading), len(table.continued)) + len(table.head) + 200
        pending = [_fit_row(row, max(budget - fixed, 4 * len(_CUT))) for row in table.rows]
        first = True
        while pending:
            heading = table.lead + table.heading if first else table.continued
            room = budget - size - fixed
            take, used = 0, 0
            while take < len(pending) and used + len(pending[take]) <= room:
                used += len(pending[take])
                take += 1
            if take == 0 and size > 0:
                parts.append([])
                size = 0
                continue
            text = _close(heading, table.head, pending[: max(take, 1)], table.fold)
            parts[-1].append(text)
            size += len(text)
            pending, first = pending[max(take, 1):], False
            if pending:
                parts.append([])
                size = 0
    names = [p.name for p in part_paths(Path(file_name), len(parts))]
    return [_part_heading(plan, n, names) + "".join(texts) for n, texts in enumerate(parts, start=1)]


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
        write_private_text(target, text)  # masked, but unmarked personal data may be there
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
    lines = [
        f"- Environment: `{_code(plan.environment)}` (loader environment `{_code(plan.env_name)}`)",
        f"- API version: `{_code(plan.api_version or 'unknown')}`",
        f"- Plan digest: `{digest}` (what `loader apply --expect-digest` takes)",
        f"- Result: **{t.create} to create, {t.update} to update**, {t.unchanged} unchanged, "
        f"{t.not_in_source} not in source, {t.blocked} blocked, {t.warnings} warnings, {t.errors} errors",
        "",
        "| block | entity | " + " | ".join(COUNT_NAMES) + " |",
        "|---|---|" + "--:|" * len(COUNT_NAMES),
    ]
    for block in plan.blocks:
        values = " | ".join(str(v) for v in count_values(counts(block)))
        lines.append(f"| {_cell(block.name)} | {_cell(block.entity)} | {values} |")
    lines += ["", "<details><summary>Input fingerprints</summary>", "", "| input | sha256 |", "|---|---|"]
    lines += [f"| `{_code(relative(path))}` | `{_code(digest.removeprefix('sha256:')[:16])}…` |"
              for path, digest in sorted(plan.fingerprints.items())]
    lines += ["", "</details>", ""]
    if not plan.has_changes and not plan.has_errors:
        lines += ["No changes: the service already matches the source.", ""]
    return "\n".join(lines) + "\n"


def _findings_tables(plan: Plan, severity: str, title: str) -> list[_Table]:
    found = findings_of(plan, severity)
    if not found:
        return []
    rows = [f"| {_cell(where)} | {_cell(cut(message, MESSAGE_LIMIT))} |\n" for where, message in found]
    fold = f"{len(found)} {title.lower()}" if len(found) > FOLD_OVER else None
    return [_Table(f"## {title} ({len(found)})\n\n", f"## {title}, continued\n\n", "| where | what |\n|---|---|\n",
                   rows, fold)]


def _block_tables(block: BlockPlan) -> list[_Table]:
    made, changing, blocked = creates(block), updates(block), blocked_records(block)
    if not (made or changing or blocked or block.blocked_rows or block.not_in_source_records):
        return []
    name = f"{_cell(block.name)} ({_cell(block.entity)})"
    lead = f"## {name}\n\n`{_code(block_source(block))}`: {summary_words(counts(block))}\n\n"
    tables: list[_Table] = []
    if made:
        columns = create_columns(made)
        with_notes = any(notes(r) for r in made)
        head = "| row | " + " | ".join(_cell(clean(c)) for c in columns) + (" | notes |" if with_notes else " |")
        head += "\n|--:|" + "---|" * (len(columns) + with_notes) + "\n"
        rows = [_create_row(r, block, columns, with_notes) for r in made]
        tables.append(_Table(f"### Creates ({len(made)})\n\n", f"### {name}: creates, continued\n\n", head, rows,
                             _fold(len(made), "records to create")))
    if changing:
        rows = [_update_row(r, block) for r in changing]
        tables.append(_Table(f"### Updates ({len(changing)})\n\n", f"### {name}: updates, continued\n\n",
                             "| row | record | changes |\n|--:|---|---|\n", rows,
                             _fold(len(changing), "records to update")))
    if blocked or block.blocked_rows:
        rows = [f"| {_cell(row_cell(r, block))} | `{_code(label(r))}` | "
                f"{_cell(cut(blocked_reason(r), MESSAGE_LIMIT))} |\n" for r in blocked]
        rows += [f"| {_cell(short_place(b.source, block).removeprefix(_ROW))} | `{_code(key_label(b.key))}` | "
                 f"{_cell(cut(row_reason(b), MESSAGE_LIMIT))} |\n" for b in block.blocked_rows]
        tables.append(_Table(f"### Blocked by errors ({len(rows)})\n\n", f"### {name}: blocked, continued\n\n",
                             "| row | record | why |\n|---|---|---|\n", rows, _fold(len(rows), "blocked")))
    if block.not_in_source_records:
        rows = [f"| `{_code(key_label(n.key))}` | `{_code(clean(n.id))}` |\n" for n in block.not_in_source_records]
        summary = (f"{block.not_in_source} not in source: live records no row names "
                   "(the service has no delete: retire them by hand)")
        tables.append(_Table(f"### Not in source ({block.not_in_source})\n\n",
                             f"### {name}: not in source, continued\n\n", "| key | id |\n|---|---|\n", rows, summary))
    return [replace(tables[0], lead=lead), *tables[1:]]


def _fold(n: int, what: str) -> str | None:
    return f"{n} {what}" if n > FOLD_OVER else None


def _create_row(record: RecordPlan, block: BlockPlan, columns: list[str], with_notes: bool) -> str:
    values = create_values(record)
    cells = [_value_cell(values[c].new) if c in values else "" for c in columns]
    if with_notes:
        cells.append(_cell(cut("; ".join(notes(record)), MESSAGE_LIMIT)))
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


def _fit_row(row: str, room: int) -> str:
    """The row as is when it has at most `room` characters, else cut short with a note.

    The cut never splits a backslash escape and closes a code span it falls in, so the row stays
    one well-formed table row. Backticks in the cells are escaped (plain text) or replaced (code
    spans) by `_cell` and `_code`, so every unescaped backtick opens or closes a code span.
    """
    if len(row) <= room:
        return row
    keep = room - len(_CUT) - 1  # 1: a backtick closing a code span
    at, in_code = 0, False
    while at < keep:
        step = 1
        if row[at] == "`":
            in_code = not in_code
        elif row[at] == "\\" and (not in_code or row[at + 1:at + 2] == "|"):
            step = 2  # `\x` escapes in plain text, `\|` in code spans
        if at + step > keep:
            break
        at += step
    if in_code and row[at - 1] == "`":  # nothing kept of the span: leave it out
        at, in_code = at - 1, False
    return row[:at] + ("`" if in_code else "") + _CUT


def _close(heading: str, table_head: str, rows: list[str], fold: str | None) -> str:
    table = table_head + "".join(rows)
    if fold:
        return f"{heading}<details><summary>{fold}</summary>\n\n{table}\n</details>\n\n"
    return f"{heading}{table}\n"


def _code(text: str) -> str:
    """Text inside `code` spans: backticks and pipes cannot close the span or the table cell; one line."""
    return clean(text).replace("`", "'").replace("|", "\\|")


def _cell(text: str) -> str:
    """Plain text in a table cell, with Markdown and HTML specials escaped; one line."""
    out = clean(text).replace("\\", "\\\\").replace("|", "\\|")
    for special in "`*_[]<>#&~":
        out = out.replace(special, "\\" + special)
    return out
