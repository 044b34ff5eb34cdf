"""The plan.json form of a plan (schemas/plan.schema.json): plain dicts and back.

`plan_to_dict` / `plan_from_dict` are each other's inverse; `loader.plan.plan_file` writes and
reads the file (a record at a time, its PII masked, checked against the schema).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loader.findings import Finding
from loader.places import CellRef, place_from_dict, place_to_dict
from loader.plan.model import (
    Action,
    BlockedRow,
    BlockPlan,
    DroppedRecord,
    FieldChange,
    FieldOutcome,
    FieldRule,
    NotInSource,
    PendingId,
    Plan,
    RecordPlan,
    SourceReading,
)

PLAN_FORMAT_VERSION = 1


def _encode(value: Any) -> Any:
    if isinstance(value, PendingId):
        return {"$pending": value.ref}
    if isinstance(value, Mapping):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$pending"}:
            return PendingId(value["$pending"])
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def _finding_to_dict(f: Finding) -> dict[str, Any]:
    where = None if f.where is None else place_to_dict(f.where)
    out: dict[str, Any] = {"severity": f.severity, "code": f.code, "message": f.message, "where": where}
    if f.cause:  # how reports group findings by cause (loader.finding_groups); left out when empty
        out["cause"] = f.cause
    if f.rule is not None:
        out["rule"] = place_to_dict(f.rule)
    if f.key:
        out["key"] = f.key
    return out


def record_to_dict(r: RecordPlan) -> dict[str, Any]:
    return {
        "ref": r.ref,
        "block": r.block,
        "entity": r.entity,
        "key": _encode(list(r.key)),
        "action": r.action.value,
        "payload": _encode(r.payload),
        "source": place_to_dict(r.source),
        "row": r.row,
        "live_id": r.live_id,
        "live_updated_time": r.live_updated_time,
        "changes": [
            {"field": c.field, "old": _encode(c.old), "new": _encode(c.new), "pii": c.pii}
            for c in r.changes
        ],
        "status_path": list(r.status_path),
        "depends_on": list(r.depends_on),
        "refers_to": list(r.refers_to),
        "findings": [_finding_to_dict(f) for f in r.findings],
        "blocked": r.blocked,
    } | ({"also_rows": [list(pair) for pair in r.also_rows]} if r.also_rows else {}) | _history_to_dict(r)


def _history_to_dict(r: RecordPlan) -> dict[str, Any]:
    """The three-way outcomes, present only where a history was compared against (plans stay as they were)."""
    found: dict[str, Any] = {}
    if r.history_line is not None:
        found["history_line"] = r.history_line
    if r.kept:
        found["kept"] = [_outcome_to_dict(o) for o in r.kept]
    if r.conflicts:
        found["conflicts"] = [_outcome_to_dict(o) for o in r.conflicts]
    if r.confirmed:
        found["confirmed"] = list(r.confirmed)
    if r.written_after:
        found["written_after"] = {name: w if isinstance(w, str) else list(w) for name, w in r.written_after}
    return found


def _outcome_to_dict(o: FieldOutcome) -> dict[str, Any]:
    return {"field": o.field, "sheet": _encode(o.sheet), "live": _encode(o.live), "last_loaded": _encode(o.last_loaded),
            "changed_by": o.changed_by, "changed_at": o.changed_at, "pii": o.pii, "seen": o.seen}


def _outcome_from_dict(d: Mapping[str, Any]) -> FieldOutcome:
    return FieldOutcome(d["field"], _decode(d.get("sheet")), _decode(d.get("live")), _decode(d.get("last_loaded")),
                        d.get("changed_by"), d.get("changed_at"), d.get("pii", False), d.get("seen", False))


def _reading_to_dict(reading: SourceReading) -> dict[str, Any]:
    return {"header_row": reading.header_row, "encoding": reading.encoding, "delimiter": reading.delimiter}


def _reading_from_dict(d: Mapping[str, Any] | None) -> SourceReading:
    """A plan made before blocks recorded how they were read gets the defaults."""
    if not d:
        return SourceReading()
    return SourceReading(d.get("header_row", 1), d.get("encoding"), d.get("delimiter"))


def _blocked_row_to_dict(b: BlockedRow) -> dict[str, Any]:
    return {
        "source": place_to_dict(b.source),
        "row": b.row,
        "key": None if b.key is None else _encode(list(b.key)),
        "live_id": b.live_id,
        "errors": [_finding_to_dict(f) for f in b.errors],
    }


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    """The plan.json form. PII values in `changes` are expected to be masked by the caller."""
    return {**plan_head_to_dict(plan), "blocks": [block_to_dict(b, [record_to_dict(r) for r in b.records])
                                                  for b in plan.blocks]}


def plan_head_to_dict(plan: Plan) -> dict[str, Any]:
    """`plan_to_dict` up to its blocks (the writer of plan.json adds them a block at a time)."""
    return {
        "format": PLAN_FORMAT_VERSION,
        "environment": plan.environment,
        "env_name": plan.env_name,
        "api_version": plan.api_version,
        "base_url": plan.base_url,
        "created_at": plan.created_at,
        "fingerprints": dict(sorted(plan.fingerprints.items())),
        "findings": [_finding_to_dict(f) for f in plan.findings],
        "extra": _encode(plan.extra),
    }


def block_to_dict(b: BlockPlan, records: Any) -> dict[str, Any]:
    """A block's plan.json form, with `records` as given (their forms, or a stand-in for them)."""
    return {
        "name": b.name,
        "entity": b.entity,
        "source_file": b.source_file,
        "sheet": b.sheet,
        "not_in_source": b.not_in_source,
        "not_in_source_records": [{"key": _encode(list(n.key)), "id": n.id} for n in b.not_in_source_records],
        "blocked_rows": [_blocked_row_to_dict(r) for r in b.blocked_rows],
        "key_fields": list(b.key_fields),
        "reading": _reading_to_dict(b.reading),
        "findings": [_finding_to_dict(f) for f in b.findings],
        "field_rules": [{"field": r.field, "place": r.place, "text": r.text} for r in b.field_rules],
        "dropped": [{"key": _encode(list(d.key)), "id": d.id, "last_loaded": d.last_loaded}
                    | ({"seen": True} if d.seen else {}) for d in b.dropped],
        "records": records,
    } | ({"mapping_file": b.mapping_file} if b.mapping_file is not None else {})


def _finding_from_dict(d: Mapping[str, Any]) -> Finding:
    where, rule = d.get("where"), d.get("rule")
    return Finding(d["severity"], d["code"], d["message"], None if where is None else place_from_dict(where),
                   d.get("cause", ""), None if rule is None else place_from_dict(rule), d.get("key", ""))


def _row_place(data: Mapping[str, Any]) -> CellRef:
    place = place_from_dict(data)
    return place if isinstance(place, CellRef) else CellRef(place.file)


def plan_from_dict(data: Mapping[str, Any]) -> Plan:
    """Inverse of plan_to_dict. The caller validates `data` against plan.schema.json first."""
    return Plan(
        environment=data["environment"],
        env_name=data.get("env_name", "sandbox"),
        api_version=data.get("api_version"),
        base_url=data["base_url"],
        created_at=data.get("created_at"),
        fingerprints=dict(data.get("fingerprints", {})),
        findings=tuple(_finding_from_dict(f) for f in data.get("findings", ())),
        extra=_decode(data.get("extra", {})),
        digest=data.get("digest"),
        blocks=tuple(_block_from_dict(b) for b in data["blocks"]),
    )


def _block_from_dict(b: Mapping[str, Any]) -> BlockPlan:
    return BlockPlan(
        name=b["name"],
        entity=b["entity"],
        source_file=b["source_file"],
        sheet=b.get("sheet"),
        not_in_source_records=tuple(
            NotInSource(tuple(_decode(n["key"])), n["id"]) for n in b.get("not_in_source_records", ())
        ),
        blocked_rows=tuple(_blocked_row_from_dict(r) for r in b.get("blocked_rows", ())),
        key_fields=tuple(b.get("key_fields", ())),
        reading=_reading_from_dict(b.get("reading")),
        findings=tuple(_finding_from_dict(f) for f in b.get("findings", ())),
        field_rules=tuple(FieldRule(r["field"], r["place"], r["text"]) for r in b.get("field_rules", ())),
        dropped=tuple(DroppedRecord(tuple(_decode(d["key"])), d["id"], d.get("last_loaded"), d.get("seen", False))
                      for d in b.get("dropped", ())),
        mapping_file=b.get("mapping_file"),
        records=tuple(_record_from_dict(r) for r in b["records"]),
    )


def _blocked_row_from_dict(r: Mapping[str, Any]) -> BlockedRow:
    return BlockedRow(
        source=_row_place(r["source"]),
        row=r.get("row"),
        key=None if r.get("key") is None else tuple(_decode(r["key"])),
        live_id=r.get("live_id"),
        errors=tuple(_finding_from_dict(f) for f in r.get("errors", ())),
    )


def _record_from_dict(r: Mapping[str, Any]) -> RecordPlan:
    return RecordPlan(
        ref=r["ref"],
        block=r["block"],
        entity=r["entity"],
        key=tuple(_decode(r["key"])),
        action=Action(r["action"]),
        payload=_decode(r["payload"]),
        source=_row_place(r["source"]),
        row=r.get("row"),
        live_id=r.get("live_id"),
        live_updated_time=r.get("live_updated_time"),
        changes=tuple(
            FieldChange(c["field"], _decode(c["old"]), _decode(c["new"]), c.get("pii", False))
            for c in r.get("changes", ())
        ),
        status_path=tuple(r.get("status_path", ())),
        depends_on=tuple(r.get("depends_on", ())),
        refers_to=tuple(r.get("refers_to", ())),
        findings=tuple(_finding_from_dict(f) for f in r.get("findings", ())),
        blocked=r.get("blocked", False),
        also_rows=tuple((block, row) for block, row in r.get("also_rows", ())),
        history_line=r.get("history_line"),
        kept=tuple(_outcome_from_dict(o) for o in r.get("kept", ())),
        conflicts=tuple(_outcome_from_dict(o) for o in r.get("conflicts", ())),
        confirmed=tuple(r.get("confirmed", ())),
        written_after=tuple((name, w if isinstance(w, str) else tuple(w))
                            for name, w in sorted(r.get("written_after", {}).items())),
    )
