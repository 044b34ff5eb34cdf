"""The creates of a block in the Markdown report: a profile of each field (its mapping line, records
with a value, empty, distinct values, the longest), then one row per record with a column per field,
at most CREATE_COLUMNS columns (the fields past them a line each in one cell, with the record's
notes), so a pull-request comment shows the table whole; when the report must cut them short, a
sample of them all follows (the records with the smallest hashes of their keys)."""

from __future__ import annotations

from loader.plan.masking import HIDDEN
from loader.plan.model import BlockPlan, RecordPlan
from loader.report.markdown_parts import Table
from loader.report.markdown_text import CELL_LIMIT, MESSAGE_LIMIT, cell, code, value_cell
from loader.report.rules import SAMPLE_SIZE, RuleGroup, rule_groups, sample
from loader.report.view import clean, create_columns, create_values, creates, cut, notes, row_cell
from loader.words import plural

CREATE_COLUMNS = 6  # the creates table's columns at most: row, four fields, the other fields in one

def create_tables(block: BlockPlan, name: str) -> list[Table]:
    """The creates by field (a profile of each), then every create (when they are cut short, a sample
    of them all follows); `name` is the block as the continued headings name it. None without creates."""
    made = creates(block)
    if not made:
        return []
    groups = [g for g in rule_groups(block, profiles=True) if g.kind == "create"]
    rows = [_profile_row(g) for g in groups]
    tables = [Table(f"#### Creates by field ({plural(len(made), 'record')})\n\n",
                    f"#### {name}: creates by field, continued\n\n",
                    "| mapping line | rule | with a value | empty | distinct | longest |\n|---|---|--:|--:|--:|---|\n",
                    rows, None)]
    fields = create_columns(made)
    with_notes = any(notes(r) for r in made)
    rest = len(fields) > CREATE_COLUMNS - 1 or with_notes  # the other fields (and notes) in one column
    columns = fields[:CREATE_COLUMNS - 2] if rest else fields
    others = "<br>".join([*(cell(clean(c)) for c in fields[len(columns):]), *(["notes"] if with_notes else [])])
    head = "| row | " + " | ".join(cell(clean(c)) for c in columns) + (f" | {others} |" if rest else " |")
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
    return tables


def _profile_row(group: RuleGroup) -> str:
    where = f"`{code(group.place)}`" if group.place else ""
    profile = group.profile
    if profile is None:
        return f"| {where} | {cell(group.text)} | {len(group.records):,} |  |  |  |\n"
    distinct = HIDDEN if profile.distinct is None else f"{profile.distinct:,}"
    longest = f"`{code(cut(profile.longest, CELL_LIMIT))}`" if profile.longest else ""
    return (f"| {where} | {cell(group.text)} | {profile.with_value:,} | {profile.empty:,} | {distinct} | "
            f"{longest} |\n")


def _create_row(record: RecordPlan, block: BlockPlan, columns: list[str], rest_fields: list[str], rest: bool) -> str:
    """A create's row: a cell per column (a masked value stays in its column), then, with `rest`, the
    values of `rest_fields` a line each in the header's order (`–` for none) and its notes, in one cell."""
    values = create_values(record)
    cells = [value_cell(values[c].new) if c in values else "" for c in columns]
    if rest:
        lines = [(value_cell(values[c].new) if c in values else "") or "–" for c in rest_fields]
        lines += [cell(cut(n, MESSAGE_LIMIT)) for n in notes(record)]
        cells.append("<br>".join(lines))
    return f"| {cell(row_cell(record, block))} | " + " | ".join(cells) + " |\n"
