"""One desired record's plan against its live match: create, update or unchanged, with its findings.

Pure. `plan_record` is what `loader.plan.diff` does for each entry: its fields compared (`loader.plan.fields`), the
findings of its source rows added (values they disagree on, codes other records claim), and a
near-duplicate warning for a create whose key a live record has but for case and spaces.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from loader.findings import Finding
from loader.live_records import updated_time
from loader.places import CellRef
from loader.plan.fields import FieldRules, plan_fields, reference_cell
from loader.plan.model import Action, RecordPlan
from loader.plan.resolve import Entry, LiveRecord, Resolver, all_text, show_key
from loader.source.records import DesiredRecord, Ref, display_value


def plan_record(
    entry: Entry, live: LiveRecord | None, resolver: Resolver, rules: FieldRules, merge_findings: Sequence[Finding],
    clashes: Sequence[str],
) -> RecordPlan:
    """The record's plan against `live`, its match."""
    rec = entry.record
    findings = _source_findings(entry, merge_findings, clashes) if merge_findings or clashes else None
    if live is None:
        near = resolver.near_duplicate(entry)
        if near is not None:
            findings = [*(findings or ()), _near_duplicate(entry, near)]
    fp = plan_fields(rec, live, rules, resolver)
    if fp.findings:
        findings = [*(findings or ()), *fp.findings]
    if live is None:
        action, live_id, updated = _CREATE, None, None
    else:
        action = _UPDATE if fp.payload or fp.status_changed else _UNCHANGED
        live_id = live.get("id")
        live_id = str(live_id) if live_id else None
        updated = updated_time(live)
    also_rows = tuple((block, ref.row) for block, ref in rec.also_rows if ref.row is not None) if rec.also_rows else ()
    return RecordPlan(  # positionally, in RecordPlan's field order
        entry.ref,
        rec.block,
        rec.entity,
        rec.key if entry.exact_key is rec.key else _plan_key(rec.key),  # a key of texts is its own exact key
        action,
        fp.payload or _NO_PAYLOAD,  # an unchanged record's: one empty payload, not one each (64 bytes)
        rec.row,
        live_id,
        updated,
        tuple(fp.changes),
        fp.status_path,
        fp.depends_on,
        tuple(findings) if findings else (),
        False,
        rec.row.row,
        fp.refers_to,
        also_rows,
    )


def reference_cells(record: DesiredRecord, live: LiveRecord | None, resolver: Resolver,
                    rules: FieldRules) -> dict[str, CellRef]:
    """Dependency ref -> the cell of the record's first reference to that record, which this plan
    creates: worked out again from its fields (as `plan_fields` notes them) when `refuse_cycles`
    asks, which it does only of records on a reference cycle."""
    references = plan_fields(record, live, rules, resolver).depends_at
    return {dep: reference_cell(reference, record, name) for dep, (reference, name) in references.items()}


# The payload of every record that sends nothing. Never changed: a plan's payloads are read, and
# copied where a pass changes one (loader.plan.history_fields).
_NO_PAYLOAD: Mapping[str, Any] = {}

# An Enum member looked up on its class costs about three plain attribute lookups (see loader.plan.fields).
_CREATE, _UPDATE, _UNCHANGED = Action.CREATE, Action.UPDATE, Action.UNCHANGED


def _source_findings(entry: Entry, merge_findings: Sequence[Finding], clashes: Sequence[str]) -> list[Finding]:
    """The findings of the record's source rows: values its rows disagree on, codes other records claim."""
    rec = entry.record
    findings = list(merge_findings)
    if clashes:
        key_cell = rec.place(entry.key_fields[0]) if entry.key_fields else rec.row
        findings += [Finding("error", "code-in-use", message, key_cell) for message in clashes]
    return findings


def _plan_key(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """The key as the plan shows it: references by their values (a key of texts as it is)."""
    if all_text(key):
        return key if type(key) is tuple else tuple(key)
    return tuple([p if type(p) is str else key_json(p) for p in key])


def key_json(part: Any) -> Any:
    if isinstance(part, Ref):
        return part.values[0] if len(part.values) == 1 else list(part.values)
    return part


def _near_duplicate(entry: Entry, near: LiveRecord) -> Finding:
    rec = entry.record
    desired = [display_value(p) for p in rec.key]
    found = [near.get(f) for f in entry.key_fields]
    if len(entry.key_fields) == 1:
        message = f"will create {desired[0]!r}; a live {rec.entity} has {entry.key_fields[0]} {found[0]!r}"
    else:
        shown = ", ".join(f"{f}={v!r}" for f, v in zip(entry.key_fields, found, strict=True))
        message = f"will create {rec.entity} {show_key(rec.key)!r}; a live {rec.entity} has {shown}"
    where = rec.place(entry.key_fields[-1] if len(entry.key_fields) > 1 else entry.key_fields[0])
    if [_nfc(v) for v in desired] == [_nfc(v) for v in found]:  # the same text, composed another way
        why = (" (the same text in another Unicode form: decomposed accents, as macOS exports them; write the key "
               "as live has it)")
    else:
        why = " (keys match exactly: check the case and spaces)"
    return Finding("warning", "near-duplicate-key", message + why, where)


def _nfc(value: Any) -> Any:
    return unicodedata.normalize("NFC", value) if isinstance(value, str) else value
