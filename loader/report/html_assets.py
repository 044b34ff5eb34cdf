"""The HTML report's style sheet and script, inline in every page (no request leaves it).

The script builds the rows of each block lazily, a page at a time; filters by block, action, rule
group and text; sorts; opens a record's details; lists the records not managed here only when
asked (they can be 250,000: the JSON holding them is parsed on the first opening). It writes values
with `textContent` only: no value is ever parsed as HTML.
"""

CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--head:#f6f8fa}
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:80em;padding:0 1em;color:var(--fg)}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid var(--line)}
table{border-collapse:collapse;margin:.4em 0 1em;width:100%;display:block;overflow-x:auto;max-width:max-content}
figure{margin:.5em 0}#chart{width:100%;max-width:750px;height:auto;overflow:hidden}
th,td{border:1px solid var(--line);padding:.25em .5em;text-align:left;vertical-align:top}
th{background:var(--head)}td.num,th.num{text-align:right}
th button{all:unset;cursor:pointer;display:block;width:100%}th button:focus-visible{outline:2px solid #0969da}
th[aria-sort=ascending] button::after{content:" ▲"}th[aria-sort=descending] button::after{content:" ▼"}
.create{color:#1a7f37}.update{color:#8a5a00}.blocked,.error{color:#cf222e}.warning{color:#8a5a00}
.unchanged,.muted{color:var(--muted)}.not-in-source{color:#8250df}
code,.val{font-family:ui-monospace,monospace;white-space:pre-wrap;word-break:break-word}
.controls{position:sticky;top:0;background:#fff;padding:.5em 0;border-bottom:1px solid var(--line);z-index:1}
.controls input{width:22em;max-width:100%;box-sizing:border-box;padding:.25em}
.controls select{padding:.2em;max-width:100%}.controls label{display:inline-block;max-width:100%}
button.rec{all:unset;cursor:pointer;font-family:ui-monospace,monospace;color:#0969da}
button.rec:focus-visible{outline:2px solid #0969da}tr.details td{background:#fbfbfc}
.more{margin:.2em 0 1em}svg text{font:12px system-ui,sans-serif}.dropped{color:#8250df}
#rules .hist{display:grid;grid-template-columns:minmax(0,1fr) 12em;gap:.15em .6em;align-items:center}
button.rule{all:unset;cursor:pointer;display:contents}button.rule:focus-visible .rule-label{outline:2px solid #0969da}
button.rule[aria-pressed=true] .rule-label{font-weight:bold}
.rule-label{overflow-wrap:anywhere}.rule-bar{display:flex;align-items:center;gap:.4em}
.bar{display:inline-block;height:.9em;min-width:2px;background:#b06d00}.bar.create{background:#1a7f37}
details.nm{margin:.2em 0 1em}
@media print{.controls,.more,th button::after{display:none}body{max-width:none;margin:0}
  h2{break-after:avoid}tr{break-inside:avoid}button.rec{color:inherit}}
@media (max-width:600px){body{margin:.5em auto;padding:0 .5em}.controls input{width:100%}}
"""

JS = r"""
(function(){
'use strict';
const data=JSON.parse(document.getElementById('plan-data').textContent);
const PAGE=data.page;const q=document.getElementById('q');const blockSel=document.getElementById('block');
const actionSel=document.getElementById('action');const shown=document.getElementById('shown');
const ruleSel=document.getElementById('rule');
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
function matches(r,text,action,rule){if(action==='changes'){if(r.a==='unchanged')return false;}
  else if(action&&r.a!==action)return false;
  if(rule!==''&&!(r.g&&r.g.indexOf(Number(rule))>=0))return false;
  if(!text)return true;if(r.t===undefined)r.t=(r.p+' '+r.k+' '+r.a+' '+r.s+' '+r.w).toLowerCase();
  return r.t.includes(text);}
function apply(){const text=q.value.trim().toLowerCase();const block=blockSel.value;const action=actionSel.value;
  const rule=ruleSel.value;let n=0;
  for(const s of sections){if(block!==''&&String(s.index)!==block){s.root.hidden=true;continue;}
    const rows=s.all.filter(function(r){return matches(r,text,action,rule);});n+=rows.length;s.reset(rows);}
  document.querySelectorAll('#rules button.rule').forEach(function(b){
    b.setAttribute('aria-pressed',String(b.dataset.group===rule));});
  shown.textContent=n;}
document.querySelectorAll('#rules button.rule').forEach(function(b){b.addEventListener('click',function(){
  ruleSel.value=ruleSel.value===b.dataset.group?'':b.dataset.group;apply();});});
let notManaged=null;
function notManagedOf(i){if(notManaged===null)
  notManaged=JSON.parse(document.getElementById('not-managed-data').textContent);return notManaged[i]||[];}
document.querySelectorAll('details.nm').forEach(function(d){const body=d.querySelector('tbody');
  const more=d.querySelector('button');let done=0;
  function page(){const rows=notManagedOf(d.dataset.block);const end=Math.min(rows.length,done+PAGE);
    const frag=document.createDocumentFragment();
    for(let j=done;j<end;j++){const tr=el('tr');tr.appendChild(el('td','val',rows[j][0]));
      tr.appendChild(el('td','val',rows[j][1]));frag.appendChild(tr);}
    body.appendChild(frag);done=end;more.hidden=done>=rows.length;}
  d.addEventListener('toggle',function(){if(d.open&&done===0)page();});more.addEventListener('click',page);});
function summary(r){const parts=r.f.map(function(f){return r.a==='create'?f[0]+'='+f[2]:f[0]+': '+f[1]+' → '+f[2];});
  for(const n of r.n)if(n.startsWith('status path')||n.startsWith('warning'))parts.push(n);
  return parts.join(r.a==='create'?', ':'; ');}
data.blocks.forEach(function(b,i){for(const r of b.records){r.f=r.f||[];r.n=r.n||[];r.e=r.e||[];
    if(r.w===undefined)r.w=b.src+' › row '+r.p.split(' ')[0];if(r.s===undefined)r.s=summary(r);}
  sections.push(new Section(i,b));});
let timer=0;q.addEventListener('input',function(){clearTimeout(timer);timer=setTimeout(apply,120);});
blockSel.addEventListener('change',apply);actionSel.addEventListener('change',apply);
ruleSel.addEventListener('change',apply);
window.addEventListener('beforeprint',function(){for(const s of sections)s.page(Infinity);});
apply();document.body.dataset.ready='true';
})();
"""
