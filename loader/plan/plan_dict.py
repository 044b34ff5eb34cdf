"""The plan.json form of a plan (schemas/plan.schema.json): plain dicts and back.

`plan_to_dict` / `plan_from_dict` are each other's inverse; `loader.plan.plan_file` writes and
reads the file (a record at a time, its PII masked, checked against the schema). A record's own
form is `loader.plan.record_form`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from loader.places import place_to_dict
from loader.plan.model import (
    BlockedRow,
    BlockPlan,
    DroppedRecord,
    FieldRule,
    NotInSource,
    Plan,
    RecordPlan,
    SourceReading,
    extra_fields,
    extra_of,
)
from loader.plan.record_form import (
    RecordReader,
    decode_value,
    encode_value,
    finding_from_dict,
    finding_to_dict,
    place_of_row,
    record_to_dict,
)

PLAN_FORMAT_VERSION = 1


def _reading_to_dict(reading: SourceReading) -> dict[str, Any]:
    return {"header_row": reading.header_row, "encoding": reading.encoding, "delimiter": reading.delimiter}


def _reading_from_dict(d: Mapping[str, Any] | None) -> SourceReading:
    """A plan made before blocks recorded how they were read gets the defaults."""
    if not d:
        return SourceReading()
    return SourceReading(d.get("header_row", 1), d.get("encoding"), d.get("delimiter"))


def _dropped_to_dict(d: DroppedRecord) -> dict[str, Any]:
    """A dropped record as plan.json keeps it: key, id, last loaded and name (null when none)."""
    return {"key": encode_value(list(d.key)), "id": d.id, "last_loaded": d.last_loaded, "name": d.name} | (
        {"seen": True} if d.seen else {})


def _dropped_from_dict(d: Mapping[str, Any]) -> DroppedRecord:
    key = tuple(decode_value(d["key"]))
    return DroppedRecord(key, d["id"], d.get("last_loaded"), d.get("seen", False), d.get("name"))


def _blocked_row_to_dict(b: BlockedRow) -> dict[str, Any]:
    return {
        "source": place_to_dict(b.source),
        "row": b.row,
        "key": None if b.key is None else encode_value(list(b.key)),
        "live_id": b.live_id,
        "errors": [finding_to_dict(f) for f in b.errors],
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
        "findings": [finding_to_dict(f) for f in plan.findings],
        "extra": extra_of(plan),
    }


def block_to_dict(b: BlockPlan, records: Any) -> dict[str, Any]:
    """A block's plan.json form, with `records` as given (their forms, or a stand-in for them)."""
    return {
        "name": b.name,
        "entity": b.entity,
        "source_file": b.source_file,
        "sheet": b.sheet,
        "not_in_source": b.not_in_source,
        "not_in_source_records": [{"key": encode_value(list(n.key)), "id": n.id} for n in b.not_in_source_records],
        "blocked_rows": [_blocked_row_to_dict(r) for r in b.blocked_rows],
        "key_fields": list(b.key_fields),
        "reading": _reading_to_dict(b.reading),
        "findings": [finding_to_dict(f) for f in b.findings],
        "field_rules": [{"field": r.field, "place": r.place, "text": r.text} for r in b.field_rules],
        "dropped": [_dropped_to_dict(d) for d in b.dropped],
        "records": records,
    } | ({"mapping_file": b.mapping_file} if b.mapping_file is not None else {}) | (
        {"released": [{"key": encode_value(list(d.key)), "id": d.id} for d in b.released]} if b.released else {}) | (
        {"formerly": list(b.formerly)} if b.formerly is not None else {})


def plan_from_dict(data: Mapping[str, Any]) -> Plan:
    """Inverse of plan_to_dict. The caller validates `data` against plan.schema.json first."""
    return _plan_from(data, RecordReader(consume=False))


def plan_from_parsed(data: dict[str, Any]) -> Plan:
    """`plan_from_dict` of the value just parsed from plan.json, which it uses up: its payloads
    become the records' (not copied), and each record's form is let go once its record is made."""
    return _plan_from(data, RecordReader(consume=True))


def plan_from_batches(head: dict[str, Any], batches: Callable[[int], Iterable[list[Any]]]) -> Plan:
    """`plan_from_parsed` of plan.json read a batch of records at a time (`loader.plan.plan_split`):
    `head` is the document with some blocks' records left out, `batches(i)` gives block i's records
    left out (none for the others), a list of their parsed forms at a time, used up as
    `plan_from_parsed` uses them. The parsed records are never all in memory."""
    return _plan_from(head, RecordReader(consume=True, batches=batches))


def plan_from_made(head: dict[str, Any], made: Sequence[tuple[RecordPlan, ...]]) -> Plan:
    """The plan of `head` (plan.json with its blocks' records left out) with block i's records `made[i]`
    (made by `record_maker()`)."""
    return _plan_from(head, _Made(made))


def _plan_from(data: Mapping[str, Any], reader: RecordReader | _Made) -> Plan:
    return Plan(
        environment=data["environment"],
        env_name=data.get("env_name", "sandbox"),
        api_version=data.get("api_version"),
        base_url=data["base_url"],
        created_at=data.get("created_at"),
        fingerprints=dict(data.get("fingerprints", {})),
        findings=tuple(finding_from_dict(f) for f in data.get("findings", ())),
        **extra_fields(data.get("extra", {})),
        digest=data.get("digest"),
        blocks=tuple(_block_from_dict(b, reader.block_records(index, b["records"]))
                     for index, b in enumerate(data["blocks"])),
    )


def _block_from_dict(b: Mapping[str, Any], records: tuple[RecordPlan, ...]) -> BlockPlan:
    return BlockPlan(
        name=b["name"],
        entity=b["entity"],
        source_file=b["source_file"],
        sheet=b.get("sheet"),
        not_in_source_records=tuple(
            NotInSource(tuple(decode_value(n["key"])), n["id"]) for n in b.get("not_in_source_records", ())
        ),
        blocked_rows=tuple(_blocked_row_from_dict(r) for r in b.get("blocked_rows", ())),
        key_fields=tuple(b.get("key_fields", ())),
        reading=_reading_from_dict(b.get("reading")),
        findings=tuple(finding_from_dict(f) for f in b.get("findings", ())),
        field_rules=tuple(FieldRule(r["field"], r["place"], r["text"]) for r in b.get("field_rules", ())),
        dropped=tuple(_dropped_from_dict(d) for d in b.get("dropped", ())),
        mapping_file=b.get("mapping_file"),
        records=records,
        released=tuple(_dropped_from_dict(d) for d in b.get("released", ())),
        formerly=(str(b["formerly"][0]), str(b["formerly"][1])) if b.get("formerly") else None,
    )


def _blocked_row_from_dict(r: Mapping[str, Any]) -> BlockedRow:
    return BlockedRow(
        source=place_of_row(r["source"]),
        row=r.get("row"),
        key=None if r.get("key") is None else tuple(decode_value(r["key"])),
        live_id=r.get("live_id"),
        errors=tuple(finding_from_dict(f) for f in r.get("errors", ())),
    )


class _Made:
    """Blocks' records made already (`plan_from_made`)."""

    def __init__(self, made: Sequence[tuple[RecordPlan, ...]]) -> None:
        self.made = made

    def block_records(self, index: int, forms: Any) -> tuple[RecordPlan, ...]:
        return self.made[index]

