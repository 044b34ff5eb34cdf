"""The plan as values: what will change, per block and per record.

`loader.plan` computes a Plan (pure); reports render it; `loader.apply` executes it.
`plan_to_dict` / `plan_from_dict` are the plan.json form (schemas/plan.schema.json).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from loader.findings import Finding
from loader.places import CellRef, place_from_dict, place_to_dict

PLAN_FORMAT_VERSION = 1


class Action(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class PendingId:
    """Stands in a payload for the id of a record this plan creates (`RecordPlan.ref`).

    The executor replaces it with the real id once that record exists.
    In plan.json it is written as {"$pending": "<ref>"}.
    """

    ref: str


@dataclass(frozen=True, slots=True)
class FieldChange:
    field: str  # "name", or "custom_attributes.Faculty"
    old: Any
    new: Any
    pii: bool = False


def field_change(field: str, old: Any, new: Any, pii: bool = False) -> FieldChange:
    """FieldChange(field, old, new, pii), made the fast way (see `record_plan`)."""
    made = object.__new__(FieldChange)
    put_field, put_old, put_new, put_pii = _FIELD_CHANGE_SLOTS
    put_field(made, field)
    put_old(made, old)
    put_new(made, new)
    put_pii(made, pii)
    return made


_FIELD_CHANGE_SLOTS = tuple(FieldChange.__dict__[f.name].__set__ for f in fields(FieldChange))


@dataclass(frozen=True)
class SourceReading:
    """How a block's rows were read, so that results.xlsx copies them exactly as the plan did."""

    header_row: int = 1
    encoding: str | None = None  # CSV only; None: UTF-8 with or without BOM
    delimiter: str | None = None  # CSV only; None: sniffed


@dataclass(frozen=True, slots=True)
class RecordPlan:
    """One desired record and what will be done to it.

    `ref` is stable within the plan ("<block>/<key values joined by '/'>").
    `payload` is the body of the create or update (PendingId where an id is not known yet);
    `status_path` the statuses to set afterwards, one update each, in order.
    `depends_on` the refs of records this plan creates that this one needs first.
    `blocked` is true when this record or something it depends on has errors.
    """

    ref: str
    block: str
    entity: str
    key: tuple[Any, ...]
    action: Action
    payload: Mapping[str, Any]
    source: CellRef  # the row's place, shown as "curriculum.xlsx › Courses › row 7"
    live_id: str | None = None
    live_updated_time: int | None = None
    changes: tuple[FieldChange, ...] = ()
    status_path: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    blocked: bool = False
    row: int | None = None  # 1-based source row, for the results workbook
    refers_to: tuple[str, ...] = ()  # records of this plan it refers to by their live id (stale checks)
    also_rows: tuple[tuple[str, int], ...] = ()  # (block, row) of the other source rows merged into it

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "warning")

    @property
    def has_changes(self) -> bool:
        return self.action is not Action.UNCHANGED or bool(self.status_path)


def record_plan(
    ref: str, block: str, entity: str, key: tuple[Any, ...], action: Action, payload: Mapping[str, Any],
    source: CellRef, live_id: str | None, live_updated_time: int | None, changes: tuple[FieldChange, ...],
    status_path: tuple[str, ...], depends_on: tuple[str, ...], findings: tuple[Finding, ...], row: int | None,
    refers_to: tuple[str, ...], also_rows: tuple[tuple[str, int], ...], /,
) -> RecordPlan:
    """RecordPlan(...) not yet blocked, made the fast way: the planner makes one per desired record.

    A frozen dataclass's __init__ sets each field through object.__setattr__ (here about 3.5 µs for
    RecordPlan's 17 fields); this sets its slots directly. The instance is the same;
    tests/plan/test_model_makers.py checks that every field is filled, in order. Slots, not a
    __dict__: a filled __dict__ took more than twice the memory.
    """
    made = object.__new__(RecordPlan)
    put = _RECORD_PLAN_SLOTS  # one setter per field, in field order (a loop over them cost 1.3 µs more)
    put[0](made, ref), put[1](made, block), put[2](made, entity), put[3](made, key), put[4](made, action)
    put[5](made, payload), put[6](made, source), put[7](made, live_id), put[8](made, live_updated_time)
    put[9](made, changes), put[10](made, status_path), put[11](made, depends_on), put[12](made, findings)
    put[13](made, False), put[14](made, row), put[15](made, refers_to), put[16](made, also_rows)
    return made


_RECORD_PLAN_SLOTS = tuple(RecordPlan.__dict__[f.name].__set__ for f in fields(RecordPlan))


@dataclass(frozen=True)
class NotInSource:
    """A live record no row of the source names: the service has no delete, so a person retires it."""

    key: tuple[Any, ...]  # its values of the block's key fields
    id: str


@dataclass(frozen=True)
class DroppedRecord:
    """A live record this block loaded in an earlier cycle that its sheet no longer names (retired by hand)."""

    key: tuple[Any, ...]
    id: str
    last_loaded: str | None = None  # when an apply last loaded it (ISO time)


@dataclass(frozen=True)
class FieldRule:
    """The mapping line that sets one field of a block; reports group changes by it (not in the digest)."""

    field: str  # "name", or "custom_attributes.Faculty"
    place: str  # "mappings/units.yaml:31"
    text: str  # "name ← column 'Unit Name'"


@dataclass(frozen=True)
class BlockedRow:
    """A source row that errors kept from becoming a record: planned neither way, and not "not in source".

    `key` where its key cells could be read; `live_id` the live record with that key, if any.
    """

    source: CellRef  # the row's place, shown as "curriculum.xlsx › Courses › row 7"
    row: int | None
    key: tuple[Any, ...] | None
    live_id: str | None
    errors: tuple[Finding, ...]


@dataclass(frozen=True)
class BlockPlan:
    name: str
    entity: str
    source_file: str
    sheet: str | None
    records: tuple[RecordPlan, ...]
    not_in_source_records: tuple[NotInSource, ...] = ()
    findings: tuple[Finding, ...] = ()  # block-level findings (not tied to one record)
    key_fields: tuple[str, ...] = ()  # the mapping block's `key:`; how apply looks a record up by name
    blocked_rows: tuple[BlockedRow, ...] = ()
    reading: SourceReading = SourceReading()  # how its source was read (results.xlsx reads it again)
    field_rules: tuple[FieldRule, ...] = ()  # the mapping line of each field it sets
    dropped: tuple[DroppedRecord, ...] = ()  # records it loaded before that its sheet no longer names

    def count(self, action: Action) -> int:
        return sum(1 for r in self.records if r.action is action and not r.errors)

    @property
    def not_in_source(self) -> int:
        return len(self.not_in_source_records)

    @property
    def blocked(self) -> int:
        """Records blocked by errors (their own or a dependency's), and rows left out by errors."""
        return sum(1 for r in self.records if r.blocked or (r.findings and r.errors)) + len(self.blocked_rows)


@dataclass(frozen=True)
class Plan:
    environment: str
    api_version: str | None
    base_url: str
    fingerprints: Mapping[str, str]  # input path -> "sha256:<hex>"
    blocks: tuple[BlockPlan, ...]
    findings: tuple[Finding, ...] = ()  # plan-level findings
    created_at: str | None = None  # ISO time; the one non-deterministic header field
    env_name: str = "sandbox"  # the loader.yaml environment name it was made for
    extra: Mapping[str, Any] = field(default_factory=dict)
    digest: str | None = None  # the digest recorded in plan.json (its PII is masked, so it cannot be recomputed)

    def records(self) -> tuple[RecordPlan, ...]:
        return tuple(r for b in self.blocks for r in b.records)

    @property
    def has_errors(self) -> bool:
        return bool(self.errors())

    def errors(self) -> tuple[Finding, ...]:
        """Every error of the plan: plan-level, block-level and per record."""
        found = [f for f in self.findings if f.severity == "error"]
        found += [f for b in self.blocks for f in b.findings if f.severity == "error"]
        found += [f for r in self.records() for f in r.errors]
        return tuple(found)

    @property
    def has_changes(self) -> bool:
        return any(r.has_changes and not r.blocked for r in self.records())


# ---- plan.json ---------------------------------------------------------------------------


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
    } | ({"also_rows": [list(pair) for pair in r.also_rows]} if r.also_rows else {})


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
        "dropped": [{"key": _encode(list(d.key)), "id": d.id, "last_loaded": d.last_loaded} for d in b.dropped],
        "records": records,
    }


def _finding_from_dict(d: Mapping[str, Any]) -> Finding:
    where, rule = d.get("where"), d.get("rule")
    return Finding(d["severity"], d["code"], d["message"], None if where is None else place_from_dict(where),
                   d.get("cause", ""), None if rule is None else place_from_dict(rule), d.get("key", ""))


def _row_place(data: Mapping[str, Any]) -> CellRef:
    place = place_from_dict(data)
    return place if isinstance(place, CellRef) else CellRef(place.file)


def plan_from_dict(data: Mapping[str, Any]) -> Plan:
    """Inverse of plan_to_dict. The caller validates `data` against plan.schema.json first."""
    blocks = tuple(
        BlockPlan(
            name=b["name"],
            entity=b["entity"],
            source_file=b["source_file"],
            sheet=b.get("sheet"),
            not_in_source_records=tuple(
                NotInSource(tuple(_decode(n["key"])), n["id"]) for n in b.get("not_in_source_records", ())
            ),
            blocked_rows=tuple(
                BlockedRow(
                    source=_row_place(r["source"]),
                    row=r.get("row"),
                    key=None if r.get("key") is None else tuple(_decode(r["key"])),
                    live_id=r.get("live_id"),
                    errors=tuple(_finding_from_dict(f) for f in r.get("errors", ())),
                )
                for r in b.get("blocked_rows", ())
            ),
            key_fields=tuple(b.get("key_fields", ())),
            reading=_reading_from_dict(b.get("reading")),
            findings=tuple(_finding_from_dict(f) for f in b.get("findings", ())),
            field_rules=tuple(FieldRule(r["field"], r["place"], r["text"]) for r in b.get("field_rules", ())),
            dropped=tuple(DroppedRecord(tuple(_decode(d["key"])), d["id"], d.get("last_loaded"))
                          for d in b.get("dropped", ())),
            records=tuple(
                RecordPlan(
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
                )
                for r in b["records"]
            ),
        )
        for b in data["blocks"]
    )
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
        blocks=blocks,
    )
