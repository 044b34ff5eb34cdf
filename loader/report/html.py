"""The plan as one self-contained HTML file: inline CSS and JavaScript, no network.

A table of every change (one row per field change, status path or finding) that sorts on any
column header and filters by text and by action. PII is masked; every value is HTML-escaped.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from loader.plan.digest import plan_digest
from loader.plan.model import Plan, RecordPlan
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

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d1d1f}
h1{font-size:1.4em}table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #d0d0d5;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f6}#changes th{cursor:pointer;user-select:none}
#changes th.asc::after{content:" ▲"}#changes th.desc::after{content:" ▼"}
td.num{text-align:right}.create{color:#116329}.update{color:#8a5a00}.error{color:#b3261e}
.warning{color:#8a5a00}.unchanged{color:#6e6e73}code{font-family:ui-monospace,monospace;white-space:pre-wrap}
.controls{margin:.5em 0}.controls input{width:24em;padding:.2em}.muted{color:#6e6e73}
"""

_JS = """
(function(){
  const table=document.getElementById('changes');const body=table.tBodies[0];
  const rows=Array.from(body.rows);const text=document.getElementById('filter');
  const action=document.getElementById('action');const shown=document.getElementById('shown');
  function apply(){const q=text.value.toLowerCase();const a=action.value;let n=0;
    for(const r of rows){const ok=(!a||r.dataset.action===a)&&(!q||r.textContent.toLowerCase().includes(q));
      r.style.display=ok?'':'none';if(ok)n++;}shown.textContent=n;}
  text.addEventListener('input',apply);action.addEventListener('change',apply);
  Array.from(table.tHead.rows[0].cells).forEach(function(th,i){th.addEventListener('click',function(){
    const asc=!th.classList.contains('asc');
    Array.from(table.tHead.rows[0].cells).forEach(function(c){c.classList.remove('asc','desc');});
    th.classList.add(asc?'asc':'desc');
    rows.sort(function(x,y){const p=x.cells[i].textContent,q=y.cells[i].textContent;
      return (asc?1:-1)*p.localeCompare(q,undefined,{numeric:true});});
    for(const r of rows)body.appendChild(r);});});
  apply();
})();
"""


def render_html(plan: Plan) -> str:
    """The whole report as one HTML document."""
    digest = plan_digest(plan)  # issue 13: before masking, so every value counts
    plan = masked_plan(plan)
    t = totals(plan)
    rows = [row for block in plan.blocks for record in changed_records(block) for row in _rows(record)]
    rows += [_finding_row(context, f.severity, f.message, f.where) for context, f in all_findings(plan)
             if not context or "/" not in context]
    title = f"Plan for {plan.environment}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
        'script-src \'unsafe-inline\'">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>Environment <code>{escape(plan.environment)}</code> (loader environment "
        f"<code>{escape(plan.env_name)}</code>), API version <code>{escape(plan.api_version or 'unknown')}</code>. "
        f"<strong>{t.create} to create, {t.update} to update</strong>, {t.unchanged} unchanged, "
        f"{t.not_in_source} not in source, {t.warnings} warnings, {t.errors} errors.</p>",
        f"<p>Plan digest <code>{escape(digest)}</code> (for <code>loader apply --expect-digest</code>).</p>",
        _counts_table(plan),
        '<div class="controls"><input id="filter" type="search" placeholder="Filter: any text (record, field, value,'
        ' cell)"> <select id="action"><option value="">all rows</option><option>create</option>'
        "<option>update</option><option>error</option><option>warning</option></select> "
        '<span class="muted"><span id="shown"></span> rows shown</span></div>',
        '<table id="changes"><thead><tr><th>block</th><th>action</th><th>record</th><th>field</th><th>old</th>'
        "<th>new</th><th>source</th></tr></thead><tbody>",
        *rows,
        "</tbody></table>",
        _fingerprints(plan),
        f"<script>{_JS}</script></body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_html(plan: Plan, path: Path) -> None:
    path.write_text(render_html(plan), encoding="utf-8")


def _counts_table(plan: Plan) -> str:
    head = "".join(f"<th>{h}</th>" for h in
                   ("block", "entity", "create", "update", "unchanged", "not in source", "warnings", "errors"))
    body = []
    for block in plan.blocks:
        c = counts(block)
        cells = "".join(f'<td class="num">{n}</td>' for n in
                        (c.create, c.update, c.unchanged, c.not_in_source, c.warnings, c.errors))
        body.append(f"<tr><td>{escape(block.name)}</td><td>{escape(block.entity)}</td>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _rows(record: RecordPlan) -> list[str]:
    action = action_word(record)
    common = f"<td>{escape(record.block)}</td><td class=\"{action}\">{action}</td><td>{escape(label(record))}</td>"
    source = f"<td>{escape(record.source)}</td>"
    rows = []
    for change in record.changes:
        old = "" if change.old is None and action == "create" else _code(value_text(change.old))
        rows.append(f'<tr data-action="{action}">{common}<td>{escape(change.field)}</td><td>{old}</td>'
                    f"<td>{_code(value_text(change.new))}</td>{source}</tr>")
    if record.status_path:
        rows.append(f'<tr data-action="{action}">{common}<td>status path</td><td></td>'
                    f"<td>{escape(status_text(record))}</td>{source}</tr>")
    for f in record.findings:
        rows.append(f'<tr data-action="{f.severity}"><td>{escape(record.block)}</td><td class="{f.severity}">'
                    f"{f.severity}</td><td>{escape(label(record))}</td><td></td><td></td><td>{escape(f.message)}</td>"
                    f"<td>{escape(f.where or '')}</td></tr>")
    return rows


def _finding_row(context: str, severity: str, message: str, where: str | None) -> str:
    return (f'<tr data-action="{severity}"><td>{escape(context)}</td><td class="{severity}">{severity}</td>'
            f"<td></td><td></td><td></td><td>{escape(message)}</td><td>{escape(where or '')}</td></tr>")


def _code(text: str) -> str:
    return f"<code>{escape(text)}</code>"


def _fingerprints(plan: Plan) -> str:
    items = "".join(f"<li><code>{escape(p)}</code> <code class=\"muted\">{escape(d)}</code></li>"
                    for p, d in sorted(plan.fingerprints.items()))
    return f"<details><summary>Input fingerprints</summary><ul>{items}</ul></details>"
