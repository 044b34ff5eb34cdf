"""The plan as Markdown for a pull request or a CI job summary.

Deterministic: no time in the body, stable order, so two reports of one plan are byte-identical
and a git diff of reports is a change of plan. The header names the environment, the API version
and the input fingerprints. Blocks with many changes are folded in <details>. A report longer than
a pull-request comment allows (65,536 characters) is split into numbered parts (plan.md,
plan.part2.md, ...), each complete Markdown, the summary in the first. A single table row too
long for a part is cut, with a note saying so: plan.json and the HTML report hold the full text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loader.plan.digest import plan_digest
from loader.plan.model import BlockPlan, Plan, RecordPlan
from loader.report.masking import HIDDEN, masked_plan
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

PART_LIMIT = 65_536
FOLD_OVER = 20  # changed records in a block above which its table is folded
_RESERVE = 1_024  # room kept in each part for its heading and the list of parts
_TABLE_HEAD = "| action | record | field | old | new | source |\n|---|---|---|---|---|---|\n"
_CUT = " … (cut: too long for this report; the full text is in plan.json and the HTML report) |\n"


@dataclass(frozen=True)
class _Chunk:
    """A piece of Markdown that is complete on its own (tables and <details> closed)."""

    text: str


def render_parts(plan: Plan, *, limit: int = PART_LIMIT, file_name: str = "plan.md") -> list[str]:
    """The report as one or more complete Markdown documents, each at most `limit` characters.

    `file_name` is the first part's file name; the first part lists the others by name.
    """
    digest = plan_digest(plan)  # issue 13: before masking, so every value counts
    plan = masked_plan(plan)
    budget = max(limit - _RESERVE, 1_000)
    summary = _summary(plan, digest)
    chunks = _findings_chunks(plan, "error", "Errors", budget) + _findings_chunks(plan, "warning", "Warnings", budget)
    chunks += [c for block in plan.blocks for c in _block_chunks(block, budget)]
    parts: list[list[str]] = [[summary]]
    size = len(summary)
    for chunk in chunks:
        if size + len(chunk.text) > budget:
            parts.append([])
            size = 0
        parts[-1].append(chunk.text)
        size += len(chunk.text)
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
        target.write_text(text, encoding="utf-8")
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
        f"- Plan digest: `{digest}`",  # issue 13: what `apply --expect-digest` takes
        f"- Result: **{t.create} to create, {t.update} to update**, {t.unchanged} unchanged, "
        f"{t.not_in_source} not in source, {t.warnings} warnings, {t.errors} errors",
        "",
        "| block | entity | create | update | unchanged | not in source | warnings | errors |",
        "|---|---|--:|--:|--:|--:|--:|--:|",
    ]
    for block in plan.blocks:
        c = counts(block)
        lines.append(
            f"| {_cell(block.name)} | {block.entity} | {c.create} | {c.update} | {c.unchanged} | "
            f"{c.not_in_source} | {c.warnings} | {c.errors} |"
        )
    lines += ["", "<details><summary>Input fingerprints</summary>", "", "| input | sha256 |", "|---|---|"]
    lines += [f"| `{_code(path)}` | `{digest.removeprefix('sha256:')[:16]}…` |"
              for path, digest in sorted(plan.fingerprints.items())]
    lines += ["", "</details>", ""]
    if not plan.has_changes and not plan.has_errors:
        lines += ["No changes: the service already matches the source.", ""]
    return "\n".join(lines) + "\n"


def _findings_chunks(plan: Plan, severity: str, title: str, budget: int) -> list[_Chunk]:
    found = [f for _, f in all_findings(plan) if f.severity == severity]
    rows = [f"| {_cell(f.where or '')} | {_cell(f.message)} |\n" for f in found]
    heading = f"## {title} ({len(found)})\n\n"
    fold = f"{len(found)} {title.lower()}" if len(found) > FOLD_OVER else None
    return _table_chunks(heading, f"## {title}, continued\n\n", "| where | what |\n|---|---|\n", rows, fold, budget)


def _block_chunks(block: BlockPlan, budget: int) -> list[_Chunk]:
    records = changed_records(block)
    if not records:
        return []
    c = counts(block)
    where = f"{block.source_file} › {block.sheet}" if block.sheet else block.source_file
    heading = (f"## {_cell(block.name)} ({block.entity})\n\n`{_code(where)}`: {c.create} to create, "
               f"{c.update} to update, {c.unchanged} unchanged, {c.not_in_source} not in source\n\n")
    continued = f"## {_cell(block.name)} ({block.entity}), continued\n\n"
    fold = f"{len(records)} records with changes or findings" if len(records) > FOLD_OVER else None
    rows = [row for record in records for row in _record_rows(record)]
    return _table_chunks(heading, continued, _TABLE_HEAD, rows, fold, budget)


def _table_chunks(
    heading: str, continued: str, table_head: str, rows: list[str], fold: str | None, budget: int
) -> list[_Chunk]:
    """A table cut into complete pieces of at most `budget` characters (headings repeated)."""
    if not rows:
        return []
    chunks: list[_Chunk] = []
    current: list[str] = []
    size = 0
    overhead = len(heading) + len(table_head) + 200
    room = max(budget - overhead, 4 * len(_CUT))
    for row in rows:
        row = _fit_row(row, room)
        if current and size + len(row) + overhead > budget:
            chunks.append(_close(continued if chunks else heading, table_head, current, fold))
            current, size = [], 0
        current.append(row)
        size += len(row)
    chunks.append(_close(continued if chunks else heading, table_head, current, fold))
    return chunks


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


def _close(heading: str, table_head: str, rows: list[str], fold: str | None) -> _Chunk:
    table = table_head + "".join(rows)
    if fold:
        return _Chunk(f"{heading}<details><summary>{fold}</summary>\n\n{table}\n</details>\n\n")
    return _Chunk(f"{heading}{table}\n")


def _record_rows(record: RecordPlan) -> list[str]:
    action = action_word(record)
    name = f"`{_code(label(record))}`"
    source = _cell(record.source)
    rows = []
    for change in record.changes:
        old = "" if change.old is None and record.action.value == "create" else _value(change.old)
        rows.append(f"| {action} | {name} | {_cell(change.field)} | {old} | {_value(change.new)} | {source} |\n")
    if record.status_path:
        rows.append(f"| {action} | {name} | status path | | {_cell(status_text(record))} | {source} |\n")
    for finding in record.findings:
        rows.append(f"| {finding.severity} | {name} | | | {_cell(finding.message)} | {_cell(finding.where or '')} |\n")
    if not rows:
        rows.append(f"| {action} | {name} | | | | {source} |\n")
    return rows


def _value(value: object) -> str:
    text = value_text(value)
    return text if text == HIDDEN else f"`{_code(text)}`"


def _code(text: str) -> str:
    """Text inside `code` spans: backticks and pipes cannot close the span or the table cell."""
    return text.replace("`", "'").replace("|", "\\|").replace("\n", " ")


def _cell(text: str) -> str:
    """Plain text in a table cell, with Markdown and HTML specials escaped."""
    out = text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    for special in "`*_[]<>#":
        out = out.replace(special, "\\" + special)
    return out
