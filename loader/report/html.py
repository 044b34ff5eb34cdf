"""The plan as one self-contained HTML file, a review tool: inline CSS, SVG and JavaScript, no network.

The page: the summary with a chart of actions per block (inline SVG), errors and warnings first,
then a section per block with one row per record (creates, updates, blocked records and rows,
unchanged records, records not in the source). Filters by block, action and text; every column
sorts (click or Enter on its header); a record's details (every field, old and new, its places and
findings) open on demand (click or Enter on the record). Keyboard usable; printable (controls
hidden, open details printed).

The records travel as JSON in a `<script type="application/json">` element (`<`, `>`, `&` and line
separators escaped as \\u escapes, so no value can close the element) and the script builds rows
lazily, ROWS_PER_PAGE at a time per section as they scroll into view, so a plan of 100,000 records
stays responsive. The script writes values with `textContent` only: no value is ever parsed as HTML.
PII is masked; a Content-Security-Policy forbids any request.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from loader.collector import collector_paused
from loader.files.private import write_private_text
from loader.plan.digest import shown_digest
from loader.plan.masking import masked_plan
from loader.plan.model import BlockPlan, Plan, RecordPlan
from loader.report.view import (
    COUNT_NAMES,
    BlockCounts,
    block_source,
    blocked_reason,
    clean,
    count_values,
    counts,
    findings_of,
    is_blocked,
    key_label,
    label,
    notes,
    place,
    relative,
    row_cell,
    row_reason,
    short_place,
    summary_words,
    totals,
    value_text,
)

ROWS_PER_PAGE = 200
_COLOURS = {"create": "#1a7f37", "update": "#b06d00", "unchanged": "#8c959f", "not in source": "#8250df",
            "blocked": "#cf222e"}

_CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--head:#f6f8fa}
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:80em;padding:0 1em;color:var(--fg)}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid var(--line)}
table{border-collapse:collapse;margin:.4em 0 1em;width:100%}
th,td{border:1px solid var(--line);padding:.25em .5em;text-align:left;vertical-align:top}
th{background:var(--head)}td.num,th.num{text-align:right}
th button{all:unset;cursor:pointer;display:block;width:100%}th button:focus-visible{outline:2px solid #0969da}
th[aria-sort=ascending] button::after{content:" ▲"}th[aria-sort=descending] button::after{content:" ▼"}
.create{color:#1a7f37}.update{color:#8a5a00}.blocked,.error{color:#cf222e}.warning{color:#8a5a00}
.unchanged,.muted{color:var(--muted)}.not-in-source{color:#8250df}
code,.val{font-family:ui-monospace,monospace;white-space:pre-wrap;word-break:break-word}
.controls{position:sticky;top:0;background:#fff;padding:.5em 0;border-bottom:1px solid var(--line);z-index:1}
.controls input{width:22em;padding:.25em}.controls select{padding:.2em}
button.rec{all:unset;cursor:pointer;font-family:ui-monospace,monospace;color:#0969da}
button.rec:focus-visible{outline:2px solid #0969da}tr.details td{background:#fbfbfc}
.more{margin:.2em 0 1em}svg text{font:12px system-ui,sans-serif}
@media print{.controls,.more,th button::after{display:none}body{max-width:none;margin:0}
  h2{break-after:avoid}tr{break-inside:avoid}button.rec{color:inherit}}
"""

_JS = r"""
(function(){
'use strict';
const data=JSON.parse(document.getElementById('plan-data').textContent);
const PAGE=data.page;const q=document.getElementById('q');const blockSel=document.getElementById('block');
const actionSel=document.getElementById('action');const shown=document.getElementById('shown');
const sections=[];
function el(tag,cls,text){const e=document.createElement(tag);if(cls)e.className=cls;
  if(text!==undefined&&text!==null)e.textContent=String(text);return e;}
function cellText(r,i){return i===0?r.p:i===1?r.k:i===2?r.a:r.s;}
function detailsRow(r){const tr=el('tr','details');const td=el('td');td.colSpan=4;
  const t=el('table');const head=el('tr');
  ['field','old','new'].forEach(function(h){head.appendChild(el('th',null,h));});
  t.appendChild(head);
  for(const f of r.f){const row=el('tr');row.appendChild(el('td',null,f[0]));row.appendChild(el('td','val',f[1]));
    row.appendChild(el('td','val',f[2]));t.appendChild(row);}
  td.appendChild(el('div','muted','place: '+r.w));
  if(r.f.length)td.appendChild(t);
  for(const n of r.n)td.appendChild(el('div',null,n));
  for(const e of r.e)td.appendChild(el('div','error',e));
  tr.appendChild(td);return tr;}
function rowFor(r){const tr=el('tr');tr.dataset.action=r.a;
  tr.appendChild(el('td','num',r.p));const k=el('td');const b=el('button','rec',r.k);
  b.type='button';b.setAttribute('aria-expanded','false');b.title='show every field, old and new, and its places';
  b.addEventListener('click',function(){const open=b.getAttribute('aria-expanded')==='true';
    if(open){tr.nextSibling.remove();b.setAttribute('aria-expanded','false');}
    else{tr.after(detailsRow(r));b.setAttribute('aria-expanded','true');}});
  k.appendChild(b);tr.appendChild(k);tr.appendChild(el('td',r.a.replace(/ /g,'-'),r.a));
  tr.appendChild(el('td','val',r.s));return tr;}
function Section(index,block){this.index=index;this.block=block;this.all=block.records;this.rows=this.all;
  this.done=0;this.sortCol=-1;this.asc=true;
  this.root=document.getElementById('block-'+index);this.body=this.root.querySelector('tbody');
  this.more=this.root.querySelector('.more');this.count=this.root.querySelector('.count');const self=this;
  this.root.querySelectorAll('th button').forEach(function(btn,i){
    btn.addEventListener('click',function(){self.sort(i);});});
  this.more.querySelector('button').addEventListener('click',function(){self.page(Infinity);});
  this.observer=new IntersectionObserver(function(entries){if(entries[0].isIntersecting)self.page(PAGE);});
  this.observer.observe(this.more);}
Section.prototype.page=function(n){const end=Math.min(this.rows.length,this.done+n);
  const frag=document.createDocumentFragment();
  for(let i=this.done;i<end;i++)frag.appendChild(rowFor(this.rows[i]));this.body.appendChild(frag);this.done=end;
  this.more.hidden=this.done>=this.rows.length;
  this.more.querySelector('span').textContent=(this.rows.length-this.done)+' more';};
Section.prototype.reset=function(rows){this.rows=rows;this.done=0;this.body.textContent='';
  this.count.textContent=rows.length;this.root.hidden=rows.length===0;this.page(PAGE);};
Section.prototype.sort=function(i){this.asc=this.sortCol===i?!this.asc:true;this.sortCol=i;const asc=this.asc;
  const ths=this.root.querySelectorAll('thead th');ths.forEach(function(th,j){
    if(j===i)th.setAttribute('aria-sort',asc?'ascending':'descending');else th.removeAttribute('aria-sort');});
  const coll=new Intl.Collator(undefined,{numeric:true});
  this.all=this.all.slice().sort(function(x,y){
    return (asc?1:-1)*coll.compare(String(cellText(x,i)),String(cellText(y,i)));});
  apply();};
function matches(r,text,action){if(action==='changes'){if(r.a==='unchanged')return false;}
  else if(action&&r.a!==action)return false;
  if(!text)return true;if(r.t===undefined)r.t=(r.p+' '+r.k+' '+r.a+' '+r.s+' '+r.w).toLowerCase();
  return r.t.includes(text);}
function apply(){const text=q.value.trim().toLowerCase();const block=blockSel.value;const action=actionSel.value;
  let n=0;
  for(const s of sections){if(block!==''&&String(s.index)!==block){s.root.hidden=true;continue;}
    const rows=s.all.filter(function(r){return matches(r,text,action);});n+=rows.length;s.reset(rows);}
  shown.textContent=n;}
function summary(r){const parts=r.f.map(function(f){return r.a==='create'?f[0]+'='+f[2]:f[0]+': '+f[1]+' → '+f[2];});
  for(const n of r.n)if(n.startsWith('status path')||n.startsWith('warning'))parts.push(n);
  return parts.join(r.a==='create'?', ':'; ');}
data.blocks.forEach(function(b,i){for(const r of b.records){r.f=r.f||[];r.n=r.n||[];r.e=r.e||[];
    if(r.w===undefined)r.w=b.src+' › row '+r.p.split(' ')[0];if(r.s===undefined)r.s=summary(r);}
  sections.push(new Section(i,b));});
let timer=0;q.addEventListener('input',function(){clearTimeout(timer);timer=setTimeout(apply,120);});
blockSel.addEventListener('change',apply);actionSel.addEventListener('change',apply);
window.addEventListener('beforeprint',function(){for(const s of sections)s.page(Infinity);});
apply();document.body.dataset.ready='true';
})();
"""


_ROW = "row "


def render_html(plan: Plan) -> str:
    """The whole report as one HTML document."""
    with collector_paused():  # it allocates a few small dicts and lists per record, none in a cycle
        return _render(masked_plan(plan), shown_digest(plan))  # the digest before masking: every value counts


def _render(plan: Plan, digest: str) -> str:
    t = totals(plan)
    title = f"Plan for {clean(plan.environment)}"
    blocks = [_block_data(b) for b in plan.blocks]
    payload = {"page": ROWS_PER_PAGE, "blocks": blocks}
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
        'script-src \'unsafe-inline\'">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>Environment <code>{escape(clean(plan.environment))}</code> (loader environment "
        f"<code>{escape(clean(plan.env_name))}</code>), API version "
        f"<code>{escape(clean(plan.api_version or 'unknown'))}</code>.</p>",
        f'<p id="summary"><strong>{escape(summary_words(t))}</strong>.</p>',
        f"<p>Plan digest <code>{escape(digest)}</code> (for <code>loader apply --expect-digest</code>).</p>",
        _chart(plan),
        _counts_table(plan),
        _findings(plan, "error", "Errors"),
        _findings(plan, "warning", "Warnings"),
        _controls(plan),
        *(_section(i, b) for i, b in enumerate(plan.blocks)),
        _fingerprints(plan),
        f'<script type="application/json" id="plan-data">{_json_for_script(payload)}</script>',
        f"<script>{_JS}</script></body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def write_html(plan: Plan, path: Path) -> None:
    write_private_text(path, render_html(plan))  # masked, but unmarked personal data may be there


def _json_for_script(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


# ---- summary ---------------------------------------------------------------------------------


def _chart(plan: Plan) -> str:
    """Inline SVG: a bar per block, split by action (create, update, unchanged, not in source, blocked)."""
    rows = [(b.name, counts(b)) for b in plan.blocks]
    if not rows:
        return ""
    widest = max(_chart_total(c) for _, c in rows) or 1
    label_w, bar_w, row_h = 150, 520, 22
    height = row_h * len(rows) + 30
    out = [f'<figure><svg id="chart" role="img" aria-labelledby="chart-title" width="{label_w + bar_w + 60}" '
           f'height="{height}" viewBox="0 0 {label_w + bar_w + 60} {height}">',
           '<title id="chart-title">Records per block by action</title>']
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
                       f"<title>{escape(clean(name))}: {n} {action}</title></rect>")
            x += w
        out.append(f'<text x="{x + 4:.1f}" y="{y + 14}">{_chart_total(c)}</text>')
    legend_y = len(rows) * row_h + 20
    lx = label_w
    for action, colour in _COLOURS.items():
        out.append(f'<rect x="{lx}" y="{legend_y - 10}" width="10" height="10" fill="{colour}"></rect>'
                   f'<text x="{lx + 14}" y="{legend_y}">{action}</text>')
        lx += 22 + 7 * len(action)
    out.append("</svg></figure>")
    return "".join(out)


def _chart_parts(c: BlockCounts) -> list[tuple[str, int]]:
    return [("create", c.create), ("update", c.update), ("unchanged", c.unchanged),
            ("not in source", c.not_in_source), ("blocked", c.blocked)]


def _chart_total(c: BlockCounts) -> int:
    return sum(n for _, n in _chart_parts(c))


def _counts_table(plan: Plan) -> str:
    head = "<th>block</th><th>entity</th>" + "".join(f'<th class="num">{h}</th>' for h in COUNT_NAMES)
    body = []
    for block in plan.blocks:
        cells = "".join(f'<td class="num">{n}</td>' for n in count_values(counts(block)))
        body.append(f"<tr><td>{escape(clean(block.name))}</td><td>{escape(block.entity)}</td>{cells}</tr>")
    return f'<table id="counts"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _findings(plan: Plan, severity: str, title: str) -> str:
    found = findings_of(plan, severity)
    if not found:
        return ""
    rows = "".join(f'<tr><td>{escape(where)}</td><td class="{severity}">{escape(message)}</td></tr>'
                   for where, message in found)
    return (f'<section id="{severity}s"><h2 class="{severity}">{title} ({len(found)})</h2>'
            f"<table><thead><tr><th>where</th><th>what</th></tr></thead><tbody>{rows}</tbody></table></section>")


def _controls(plan: Plan) -> str:
    blocks = "".join(f'<option value="{i}">{escape(clean(b.name))}</option>' for i, b in enumerate(plan.blocks))
    actions = "".join(f"<option>{a}</option>" for a in ("create", "update", "blocked", "not in source", "unchanged"))
    return (
        '<div class="controls" role="search"><label>Filter <input id="q" type="search" '
        'placeholder="any text: record, field, value, row"></label> '
        f'<label>block <select id="block"><option value="">all blocks</option>{blocks}</select></label> '
        '<label>action <select id="action"><option value="changes">changes and blocked</option>'
        f'<option value="">everything</option>{actions}</select></label> '
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
        '<p class="more"><span></span> <button type="button">show all</button></p></section>'
    )


def _fingerprints(plan: Plan) -> str:
    items = "".join(f"<li><code>{escape(relative(p))}</code> <code class=\"muted\">{escape(d)}</code></li>"
                    for p, d in sorted(plan.fingerprints.items()))
    return f"<details><summary>Input fingerprints</summary><ul>{items}</ul></details>"


# ---- records as data for the script ----------------------------------------------------------


def _block_data(block: BlockPlan) -> dict[str, Any]:
    """The block's records for the script, compact (a plan can hold 100,000): empty lists and a place
    that is just the record's row of the block's sheet are left out; the script rebuilds them."""
    src = block_source(block)
    records = [_record_data(r, block, src) for r in block.records]
    for b in block.blocked_rows:
        records.append(_compact({"p": short_place(b.source, block).removeprefix(_ROW), "k": key_label(b.key),
                                 "a": "blocked", "s": row_reason(b),
                                 "n": [f"live id: {b.live_id}"] if b.live_id else [],
                                 "e": [f"{place(f.where)}: {clean(f.message)}" for f in b.errors]}))
    for n in block.not_in_source_records:
        records.append({"p": "", "k": key_label(n.key), "a": "not in source", "w": "",
                        "s": f"live id {clean(n.id)}: no row names it",
                        "n": ["the service has no delete: retire it by hand"]})
    return {"name": clean(block.name), "src": src, "records": records}


def _record_data(record: RecordPlan, block: BlockPlan, src: str) -> dict[str, Any]:
    """`s` (what changes) is left out for creates and updates: the script writes it from `f`."""
    action = "blocked" if is_blocked(record) else record.action.value
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
    return _compact(data)


def _compact(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v != []}
