"""The plan.json form of a plan (schemas/plan.schema.json): plain dicts and back.

`plan_to_dict` / `plan_from_dict` are each other's inverse; `loader.plan.plan_file` writes and
reads the file (a record at a time, its PII masked, checked against the schema).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from loader.findings import Finding
from loader.places import CellRef, place_from_dict, place_to_dict, row_place
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
    extra_fields,
    extra_of,
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
        if len(value) == 1 and "$pending" in value:
            return PendingId(value["$pending"])
        return {k: v if type(v) in _AS_IS else _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _AS_IS else _decode(v) for v in value]
    return value


def _finding_to_dict(f: Finding) -> dict[str, Any]:
    where = None if f.where is None else place_to_dict(f.where)
    out: dict[str, Any] = {"severity": f.severity, "code": f.code, "message": f.message, "where": where}
    if f.cause:  # how reports group findings by cause (loader.report.finding_groups); left out when empty
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
    } | ({"also_rows": [list(pair) for pair in r.also_rows]} if r.also_rows else {}) | _history_to_dict(r) | (
        {"renamed_from": _encode(list(r.renamed_from))} if r.renamed_from is not None else {}) | (
        {"retiring": True} if r.retiring else {})


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
    if r.confirmed_values:
        found["confirmed_values"] = {name: _encode(value) for name, value in r.confirmed_values}
    return found


def _outcome_to_dict(o: FieldOutcome) -> dict[str, Any]:
    return {"field": o.field, "sheet": _encode(o.sheet), "live": _encode(o.live), "last_loaded": _encode(o.last_loaded),
            "changed_by": o.changed_by, "changed_at": o.changed_at, "pii": o.pii, "seen": o.seen} | (
                {"editor": o.editor} if o.editor else {})  # never the e-mail address: plan.json travels


def _outcome_from_dict(d: Mapping[str, Any]) -> FieldOutcome:
    return FieldOutcome(d["field"], _decode(d.get("sheet")), _decode(d.get("live")), _decode(d.get("last_loaded")),
                        d.get("changed_by"), d.get("changed_at"), d.get("pii", False), d.get("seen", False),
                        d.get("editor"))


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
        "not_in_source_records": [{"key": _encode(list(n.key)), "id": n.id} for n in b.not_in_source_records],
        "blocked_rows": [_blocked_row_to_dict(r) for r in b.blocked_rows],
        "key_fields": list(b.key_fields),
        "reading": _reading_to_dict(b.reading),
        "findings": [_finding_to_dict(f) for f in b.findings],
        "field_rules": [{"field": r.field, "place": r.place, "text": r.text} for r in b.field_rules],
        "dropped": [{"key": _encode(list(d.key)), "id": d.id, "last_loaded": d.last_loaded, "name": d.name}
                    | ({"seen": True} if d.seen else {}) for d in b.dropped],
        "records": records,
    } | ({"mapping_file": b.mapping_file} if b.mapping_file is not None else {}) | (
        {"released": [{"key": _encode(list(d.key)), "id": d.id} for d in b.released]} if b.released else {}) | (
        {"formerly": list(b.formerly)} if b.formerly is not None else {})


def _finding_from_dict(d: Mapping[str, Any]) -> Finding:
    where, rule = d.get("where"), d.get("rule")
    return Finding(d["severity"], d["code"], d["message"], None if where is None else place_from_dict(where),
                   d.get("cause", ""), None if rule is None else place_from_dict(rule), d.get("key", ""))


def _row_place(data: Mapping[str, Any]) -> CellRef:
    place = place_from_dict(data)
    return place if isinstance(place, CellRef) else CellRef(place.file)


def plan_from_dict(data: Mapping[str, Any]) -> Plan:
    """Inverse of plan_to_dict. The caller validates `data` against plan.schema.json first."""
    return _plan_from(data, _Reader(consume=False))


def plan_from_parsed(data: dict[str, Any]) -> Plan:
    """`plan_from_dict` of the value just parsed from plan.json, which it uses up: its payloads
    become the records' (not copied), and each record's form is let go once its record is made."""
    return _plan_from(data, _Reader(consume=True))


def plan_from_batches(head: dict[str, Any], batches: Callable[[int], Iterable[list[Any]]]) -> Plan:
    """`plan_from_parsed` of plan.json read a batch of records at a time (`loader.plan.plan_split`):
    `head` is the document with some blocks' records left out, `batches(i)` gives block i's records
    left out (none for the others), a list of their parsed forms at a time, used up as
    `plan_from_parsed` uses them. The parsed records are never all in memory."""
    return _plan_from(head, _Reader(consume=True, batches=batches))


def plan_from_made(head: dict[str, Any], made: Sequence[tuple[RecordPlan, ...]]) -> Plan:
    """The plan of `head` (plan.json with its blocks' records left out) with block i's records `made[i]`
    (made by a `RecordMaker`)."""
    return _plan_from(head, _Made(made))


def _plan_from(data: Mapping[str, Any], reader: _Reader | _Made) -> Plan:
    return Plan(
        environment=data["environment"],
        env_name=data.get("env_name", "sandbox"),
        api_version=data.get("api_version"),
        base_url=data["base_url"],
        created_at=data.get("created_at"),
        fingerprints=dict(data.get("fingerprints", {})),
        findings=tuple(_finding_from_dict(f) for f in data.get("findings", ())),
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
            NotInSource(tuple(_decode(n["key"])), n["id"]) for n in b.get("not_in_source_records", ())
        ),
        blocked_rows=tuple(_blocked_row_from_dict(r) for r in b.get("blocked_rows", ())),
        key_fields=tuple(b.get("key_fields", ())),
        reading=_reading_from_dict(b.get("reading")),
        findings=tuple(_finding_from_dict(f) for f in b.get("findings", ())),
        field_rules=tuple(FieldRule(r["field"], r["place"], r["text"]) for r in b.get("field_rules", ())),
        dropped=tuple(DroppedRecord(tuple(_decode(d["key"])), d["id"], d.get("last_loaded"), d.get("seen", False),
                                    d.get("name")) for d in b.get("dropped", ())),
        mapping_file=b.get("mapping_file"),
        records=records,
        released=tuple(DroppedRecord(tuple(_decode(d["key"])), d["id"]) for d in b.get("released", ())),
        formerly=(str(b["formerly"][0]), str(b["formerly"][1])) if b.get("formerly") else None,
    )


def _blocked_row_from_dict(r: Mapping[str, Any]) -> BlockedRow:
    return BlockedRow(
        source=_row_place(r["source"]),
        row=r.get("row"),
        key=None if r.get("key") is None else tuple(_decode(r["key"])),
        live_id=r.get("live_id"),
        errors=tuple(_finding_from_dict(f) for f in r.get("errors", ())),
    )


class _Made:
    """Blocks' records made already (`plan_from_made`)."""

    def __init__(self, made: Sequence[tuple[RecordPlan, ...]]) -> None:
        self.made = made

    def block_records(self, index: int, forms: Any) -> tuple[RecordPlan, ...]:
        return self.made[index]


_ACTIONS = {action.value: action for action in Action}
def record_maker() -> _Reader:
    """What makes records of their parsed plan.json forms a batch at a time (`made(forms)`), sharing
    the names they repeat."""
    return _Reader(consume=True)


_NO_HISTORY = (None, (), (), (), (), ())  # a record's three-way outcomes when it was planned two-way
_AS_IS = frozenset({str, int, float, bool, type(None)})  # JSON scalars: decoded as they are


class _Reader:
    """Records from their plan.json forms, the names they repeat shared and their values decoded
    without the generic `_decode` where they are plain. `consume`: the forms are the parser's own,
    used up (see `plan_from_parsed`); else they are left as they were."""

    def __init__(self, consume: bool, batches: Callable[[int], Iterable[list[Any]]] | None = None) -> None:
        self.consume = consume
        self.batches = batches
        self.free: Callable[[Any], Any] = _decode_in_place if consume else _decode
        self.shared: dict[str, str] = {}  # one string per block, entity, file and sheet name

    def block_records(self, index: int, forms: Any) -> tuple[RecordPlan, ...]:
        made: list[RecordPlan] = []
        self.add_records(made, forms)
        for batch in self.batches(index) if self.batches is not None else ():
            self.add_records(made, batch)
        return tuple(made)

    def made(self, forms: list[Any]) -> list[RecordPlan]:
        """The records of `forms` (a batch of parsed records, used up as `plan_from_parsed` uses them)."""
        made: list[RecordPlan] = []
        self.add_records(made, forms)
        return made

    def add_records(self, made: list[RecordPlan], forms: Any) -> None:
        for index, form in enumerate(forms):
            made.append(self.record(form))
            if self.consume:
                forms[index] = None  # its form goes now (what the record kept of it stays)

    def record(self, r: Mapping[str, Any]) -> RecordPlan:
        """The record of its form (the schema's required keys are there: read by subscript, the
        cheapest way; the optional ones looked up)."""
        share, free = self.shared.setdefault, self.free
        block, entity, key, changes, findings = r["block"], r["entity"], r["key"], r["changes"], r["findings"]
        history = _history_from_dict(r) if _has_history(r) else _NO_HISTORY
        made = RecordPlan(
            r["ref"], share(block, block), share(entity, entity),
            tuple(key) if _plain_list(key) else tuple(_decode(k) for k in key),
            _ACTIONS[r["action"]], free(r["payload"]), self.source(r["source"]), r["live_id"],
            r["live_updated_time"],
            tuple([FieldChange(c["field"], _scalar_or(free, c["old"]), _scalar_or(free, c["new"]),
                                c.get("pii", False)) for c in changes]) if changes else (),
            _tuple(r["status_path"]), _tuple(r["depends_on"]),
            tuple([_finding_from_dict(f) for f in findings]) if findings else (),
            r["blocked"], r["row"], _tuple(r.get("refers_to")),
            tuple([(b, n) for b, n in r["also_rows"]]) if "also_rows" in r else (),
            *history,
        )
        if "renamed_from" in r:  # a renumber (rare): its old key
            made = replace(made, renamed_from=tuple(_decode(k) for k in r["renamed_from"]))
        return replace(made, retiring=True) if r.get("retiring") else made

    def source(self, d: Mapping[str, Any]) -> CellRef:
        row = d.get("row")
        if row is None or "line" in d or "cell" in d or "record" in d:
            return _row_place(d)
        share = self.shared.setdefault
        file, sheet = str(d["file"]), d.get("sheet")
        return row_place(share(file, file), sheet if sheet is None else share(sheet, sheet), int(row),
                         str(d.get("repeat", "")))


def _history_from_dict(r: Mapping[str, Any]) -> tuple[Any, ...]:
    """A record's three-way outcomes (a plan compared against a history), in RecordPlan's order of them."""
    return (
        r.get("history_line"),
        tuple(_outcome_from_dict(o) for o in r.get("kept", ())),
        tuple(_outcome_from_dict(o) for o in r.get("conflicts", ())),
        tuple(r.get("confirmed", ())),
        tuple((name, w if isinstance(w, str) else tuple(w)) for name, w in sorted(r.get("written_after", {}).items())),
        tuple((name, _decode(value)) for name, value in sorted(r.get("confirmed_values", {}).items())),
    )


def _has_history(r: Mapping[str, Any]) -> bool:
    return "history_line" in r or "kept" in r or "conflicts" in r or "confirmed" in r or "written_after" in r


def _plain_list(items: list[Any]) -> bool:
    """Every item a JSON scalar (a key's values, the common case: one text)."""
    if len(items) == 1:
        return type(items[0]) in _AS_IS
    return all(type(item) in _AS_IS for item in items)


def _tuple(items: Any) -> tuple[Any, ...]:
    return tuple(items) if items else ()


def _scalar_or(decode: Callable[[Any], Any], value: Any) -> Any:
    return value if type(value) in _AS_IS else decode(value)


def _decode_in_place(value: Any) -> Any:
    """`_decode` of a value nobody else holds: its dicts and lists are kept (changed where a
    {"$pending": ref} stands in them), not copied."""
    kind = type(value)
    if kind is dict:
        if len(value) == 1 and "$pending" in value:
            return PendingId(value["$pending"])
        for name, item in value.items():  # values replaced, no key added: the iteration holds
            if type(item) not in _AS_IS:
                decoded = _decode_in_place(item)
                if decoded is not item:
                    value[name] = decoded
        return value
    if kind is list:
        for index, item in enumerate(value):
            if type(item) not in _AS_IS:
                value[index] = _decode_in_place(item)
        return value
    return _decode(value)
