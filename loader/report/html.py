"""The plan as one self-contained HTML file, a review tool: inline CSS, SVG and JavaScript, no network.

The page: its title naming the loader environment, the summary with a chart of the changes per
block (inline SVG that scales; unchanged records as a number, not a bar), errors and warnings first,
the histogram of the rule groups (the mapping lines that made the changes: a click filters the
records to one), then a section per block with one row per record: changes to existing records
first, records dropped from the source, blocked records and rows, creates, unchanged records; the
records not managed here are listed only when asked. Filters by block, action, rule and text; every
column sorts (click or Enter on its header); a record's details (every field, old and new, its
places and findings) open on demand (click or Enter on the record). Keyboard usable; printable
(controls hidden, open details printed); on a phone (390 px) only wide tables scroll, never the page.

The records travel as JSON in a `<script type="application/json">` element (`<`, `>`, `&` and line
separators escaped as \\u escapes, so no value can close the element) and the script builds rows
lazily, ROWS_PER_PAGE at a time per section as they scroll into view, so a plan of 100,000 records
stays responsive; the records not managed here travel in an element of their own, parsed only when
one of their lists is opened. The script (`html_assets`) writes values with `textContent` only: no
value is ever parsed as HTML. PII is masked; a Content-Security-Policy forbids any request.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from loader.files.safe_write import write_text
from loader.plan.digest import shown_digest
from loader.plan.masking import masked_plan
from loader.plan.model import BlockPlan, Plan, RecordPlan
from loader.report.html_assets import CSS, JS
from loader.report.references import named_references
from loader.report.rules import RuleGroup, rule_groups
from loader.report.shown_findings import findings_count, findings_of
from loader.report.view import (
    COUNT_NAMES,
    BlockCounts,
    block_source,
    blocked_reason,
    clean,
    conflicts_of,
    count_values,
    counts,
    dropped_rows,
    is_blocked,
    key_label,
    label,
    notes,
    place,
    relative,
    row_cell,
    row_reason,
    short_place,
    shown_columns,
    summary_words,
    totals,
    value_text,
)
from loader.words import plural

ROWS_PER_PAGE = 200
_COLOURS = {"create": "#1a7f37", "update": "#b06d00", "dropped": "#8250df", "blocked": "#cf222e"}

_ROW = "row "


def render_html(plan: Plan) -> str:
    """The whole report as one HTML document."""
    digest = shown_digest(plan)  # before masking: every value counts
    return _render(named_references(masked_plan(plan)), digest)


def _render(plan: Plan, digest: str) -> str:
    t = totals(plan)
    title = f"Plan for loader environment {clean(plan.env_name)}" + (
        f" ({clean(plan.environment)})" if plan.environment != plan.env_name else "")
    groups = [g for b in plan.blocks for g in rule_groups(b, profiles=False)]
    member: dict[int, list[int]] = {}  # id of a record -> the groups it is in
    for n, group in enumerate(groups):
        for record in group.records:
            member.setdefault(id(record), []).append(n)
    blocks = [_block_data(b, member) for b in plan.blocks]
    payload = {"page": ROWS_PER_PAGE, "blocks": blocks}
    not_managed = [[[key_label(n.key), clean(n.id)] for n in b.not_in_source_records] for b in plan.blocks]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
        'script-src \'unsafe-inline\'">',
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>Environment <code>{escape(clean(plan.environment))}</code> (loader environment "
        f"<code>{escape(clean(plan.env_name))}</code>), API version "
        f"<code>{escape(clean(plan.api_version or 'unknown'))}</code>.</p>",
        f'<p id="summary"><strong>{escape(summary_words(t))}</strong>.</p>',
        f"<p>Plan digest <code>{escape(digest)}</code> (for <code>loader apply --expect-digest</code>).</p>",
        _chart(plan),
        _counts_table(plan),
        _findings(plan, "error", "Errors"),
        _conflicts(plan),
        _findings(plan, "warning", "Warnings"),
        _histogram(groups, plan),
        _controls(plan, groups),
        *(_section(i, b) for i, b in enumerate(plan.blocks)),
        _fingerprints(plan),
        f'<script type="application/json" id="plan-data">{_json_for_script(payload)}</script>',
        f'<script type="application/json" id="not-managed-data">{_json_for_script(not_managed)}</script>',
        f"<script>{JS}</script></body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def write_html(plan: Plan, path: Path) -> None:
    write_text(path, render_html(plan))  # masked, but unmarked personal data may be there


def _json_for_script(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


# ---- summary ---------------------------------------------------------------------------------


def _chart(plan: Plan) -> str:
    """Inline SVG that scales to the page: a bar per block of what changes (create, update, dropped,
    blocked), the unchanged and not-managed records as a number beside it, so the bars show the work."""
    rows = [(b.name, counts(b)) for b in plan.blocks]
    if not rows:
        return ""
    widest = max(_chart_total(c) for _, c in rows) or 1
    label_w, bar_w, row_h, note_w = 150, 300, 22, 300
    width, height = label_w + bar_w + note_w, row_h * len(rows) + 30
    out = [f'<figure><svg id="chart" role="img" aria-labelledby="chart-title" viewBox="0 0 {width} {height}" '
           f'preserveAspectRatio="xMinYMin meet">',
           '<title id="chart-title">Changes per block by action; unchanged records as a number</title>']
    for i, (name, c) in enumerate(rows):
        y = i * row_h + 4
        out.append(f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{escape(clean(name))}</text>')
        x = float(label_w)
        for action, n in _chart_parts(c):
            if not n:
                continue
            w = bar_w * n / widest
            out.append(f'<rect class="bar" data-block="{escape(clean(name))}" data-action="{action}" data-count="{n}" '
                       f'x="{x:.1f}" y="{y}" width="{max(w, 1):.1f}" height="{row_h - 6}" fill="{_COLOURS[action]}">'
                       f"<title>{escape(clean(name))}: {n:,} {action}</title></rect>")
            x += w
        out.append(f'<text class="count" x="{x + 4:.1f}" y="{y + 14}">{escape(_chart_note(c))}</text>')
    legend_y = len(rows) * row_h + 20
    lx = label_w
    for action, colour in _COLOURS.items():
        out.append(f'<rect x="{lx}" y="{legend_y - 10}" width="10" height="10" fill="{colour}"></rect>'
                   f'<text x="{lx + 14}" y="{legend_y}">{action}</text>')
        lx += 22 + 7 * len(action)
    out.append("</svg></figure>")
    return "".join(out)


def _chart_parts(c: BlockCounts) -> list[tuple[str, int]]:
    return [("renumber", c.renumber), ("create", c.create), ("update", c.update), ("dropped", c.dropped),
            ("blocked", c.blocked)]


def _chart_total(c: BlockCounts) -> int:
    return sum(n for _, n in _chart_parts(c))


def _chart_note(c: BlockCounts) -> str:
    """`3 changes · 10 unchanged · 1 not managed here`: what the bar does not draw, as numbers."""
    words = [plural(_chart_total(c), "change")]
    words += [f"{n:,} {what}" for n, what in ((c.unchanged, "unchanged"), (c.not_in_source, "not managed here")) if n]
    return " · ".join(words)


def _counts_table(plan: Plan) -> str:
    rows = [count_values(counts(block)) for block in plan.blocks]
    kept = shown_columns(rows)  # the columns some block has
    head = "<th>block</th><th>entity</th>" + "".join(f'<th class="num">{COUNT_NAMES[n]}</th>' for n in kept)
    body = []
    for block, row in zip(plan.blocks, rows, strict=True):
        cells = "".join(f'<td class="num">{row[n]:,}</td>' for n in kept)
        body.append(f"<tr><td>{escape(clean(block.name))}</td><td>{escape(block.entity)}</td>{cells}</tr>")
    return f'<table id="counts"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _findings(plan: Plan, severity: str, title: str) -> str:
    found = findings_of(plan, severity)
    if not found:
        return ""
    rows = "".join(f'<tr><td>{escape(where)}</td><td class="{severity}">{escape(message)}</td></tr>'
                   for where, message, _ in found)
    return (f'<section id="{severity}s"><h2 class="{severity}">{title} ({findings_count(found)})</h2>'
            f"<table><thead><tr><th>where</th><th>what</th></tr></thead><tbody>{rows}</tbody></table></section>")


def _conflicts(plan: Plan) -> str:
    """Conflicts after the errors: each field held, in full the first time; those shown before, counted."""
    found, seen = conflicts_of(plan)
    if not found and not seen:
        return ""
    rows = "".join(f'<tr><td>{escape(where)}</td><td class="error">{escape(text)}</td></tr>' for where, text in found)
    before = f"<p>{seen} shown before (unchanged since).</p>" if seen else ""
    return (f'<section id="conflicts"><h2 class="error">Conflicts ({len(found) + seen})</h2>{before}'
            f"<table><thead><tr><th>record</th><th>what</th></tr></thead><tbody>{rows}</tbody></table></section>")


def _histogram(groups: list[RuleGroup], plan: Plan) -> str:
    """The rule groups as a histogram of records per group; a click on one filters the records to it."""
    if not groups:
        return ""
    widest = max(len(g.records) for g in groups)
    several = len(plan.blocks) > 1
    rows = []
    for n, g in enumerate(groups):
        where = f"<code>{escape(clean(g.place))}</code> " if g.place else ""
        block = f"{escape(clean(g.block))} · " if several else ""
        width = max(100 * len(g.records) / widest, 0.5)
        rows.append(f'<button type="button" class="rule" data-group="{n}" aria-pressed="false">'
                    f'<span class="rule-label">{block}{where}{escape(clean(g.text))}</span><span class="rule-bar">'
                    f'<span class="bar {g.kind}" style="width:{width:.1f}%"></span>'
                    f'<span class="n">{len(g.records):,} {g.verb}</span></span></button>')
    return ('<section id="rules"><h2>Changes by mapping line</h2><p class="muted">The records each mapping line '
            f'changes or creates; a click shows only those.</p><div class="hist">{"".join(rows)}</div></section>')


def _controls(plan: Plan, groups: list[RuleGroup]) -> str:
    blocks = "".join(f'<option value="{i}">{escape(clean(b.name))}</option>' for i, b in enumerate(plan.blocks))
    actions = "".join(f"<option>{a}</option>" for a in ("create", "update", "dropped", "blocked", "unchanged"))
    rules = "".join(f'<option value="{n}">{escape(clean(g.block))} · {escape(clean(g.label))} ({g.kind})</option>'
                    for n, g in enumerate(groups))
    return (
        '<div class="controls" role="search"><label>Filter <input id="q" type="search" '
        'placeholder="any text: record, field, value, row"></label> '
        f'<label>block <select id="block"><option value="">all blocks</option>{blocks}</select></label> '
        '<label>action <select id="action"><option value="changes">changes and blocked</option>'
        f'<option value="">everything</option>{actions}</select></label> '
        f'<label>rule <select id="rule"><option value="">every rule</option>{rules}</select></label> '
        '<span class="muted"><span id="shown"></span> records match</span></div>'
    )


def _section(index: int, block: BlockPlan) -> str:
    head = "".join(f'<th scope="col"><button type="button">{h}</button></th>'
                   for h in ("row", "record", "action", "what changes"))
    return (
        f'<section class="block" id="block-{index}"><h2>{escape(clean(block.name))} ({escape(block.entity)}) '
        f'<span class="muted">· <span class="count"></span> shown</span></h2>'
        f"<p><code>{escape(block_source(block))}</code>: {escape(summary_words(counts(block)))}</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody></tbody></table>"
        '<p class="more"><span></span> <button type="button">show all</button></p>'
        f"{_not_managed(index, block)}</section>"
    )


def _not_managed(index: int, block: BlockPlan) -> str:
    """Records not managed here: listed only when opened (the script reads them then)."""
    if not block.not_in_source_records:
        return ""
    return (f'<details class="nm" data-block="{index}"><summary>{block.not_in_source:,} not managed here: live '
            "records no mapping of this project loads</summary><table><thead><tr><th>key</th><th>id</th></tr>"
            '</thead><tbody></tbody></table><p><button type="button">show more</button></p></details>')


def _fingerprints(plan: Plan) -> str:
    items = "".join(f"<li><code>{escape(relative(p))}</code> <code class=\"muted\">{escape(d)}</code></li>"
                    for p, d in sorted(plan.fingerprints.items()))
    return f"<details><summary>Input fingerprints</summary><ul>{items}</ul></details>"


# ---- records as data for the script ----------------------------------------------------------


def _block_data(block: BlockPlan, member: dict[int, list[int]]) -> dict[str, Any]:
    """The block's records for the script, compact (a plan can hold 100,000): empty lists and a place
    that is just the record's row of the block's sheet are left out; the script rebuilds them.

    In the order a reviewer reads them: changes to existing records, records dropped from the source,
    records and rows blocked by errors, creates, unchanged records. `g`: the rule groups of a record.
    """
    src = block_source(block)
    order = {"update": 0, "unchanged": 0, "blocked": 2, "create": 3}
    planned = sorted(block.records, key=lambda r: 2 if is_blocked(r) else 4 if not r.has_changes
                     else order[r.action.value])
    records = [_record_data(r, block, src, member.get(id(r), [])) for r in planned]
    dropped = [{"p": "", "k": d.key, "a": "dropped", "w": "",
                "s": f"{d.name + ', ' if d.name else ''}id {d.id}, last loaded {d.last_loaded}: no longer in the sheet",
                "n": [d.outcome]} for d in dropped_rows(block, every=True)]
    at = sum(1 for r in planned if not is_blocked(r) and r.has_changes and r.action.value != "create")
    records[at:at] = dropped
    at += len(dropped) + sum(1 for r in planned if is_blocked(r))
    records[at:at] = [_compact({"p": short_place(b.source, block).removeprefix(_ROW), "k": key_label(b.key),
                                "a": "blocked", "s": row_reason(b),
                                "n": [f"live id: {b.live_id}"] if b.live_id else [],
                                "e": [f"{place(f.where)}: {clean(f.message)}" for f in b.errors]})
                      for b in block.blocked_rows]
    return {"name": clean(block.name), "src": src, "records": records}


def _record_data(record: RecordPlan, block: BlockPlan, src: str, groups: list[int]) -> dict[str, Any]:
    """`s` (what changes) is left out for creates and updates: the script writes it from `f`."""
    action = "blocked" if is_blocked(record) else record.action.value
    if action == "unchanged" and record.status_path:
        action = "update"  # a status move: one update a step
    creating = action == "create"
    fields = [[clean(c.field), "" if creating and c.old is None else value_text(c.old), value_text(c.new)]
              for c in record.changes]
    data: dict[str, Any] = {"p": row_cell(record, block), "k": label(record), "a": action, "f": fields}
    if action == "blocked":
        data["s"] = blocked_reason(record)
    where = place(record.source)
    if where != f"{src} › row {record.row}":
        data["w"] = where
    live = [f"live id: {record.live_id}"] if record.live_id else []
    data["n"] = [*notes(record), *live, *(f"after {clean(d)}" for d in record.depends_on)]
    data["e"] = [f"{place(f.where)}: {clean(f.message)}" for f in record.errors] if record.findings else []
    data["g"] = groups
    return _compact(data)


def _compact(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v != []}
