"""A record's plan.json form and back, and the forms of the values and findings it holds.

`record_to_dict` writes a record's form; a `RecordReader` makes records of their parsed forms (a
batch at a time, the names they repeat shared). `loader.plan.plan_dict` puts records in their plan
and blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from loader.findings import Finding
from loader.places import CellRef, place_from_dict, place_to_dict, row_place
from loader.plan.model import Action, FieldChange, FieldOutcome, PendingId, RecordPlan


def encode_value(value: Any) -> Any:
    if isinstance(value, PendingId):
        return {"$pending": value.ref}
    if isinstance(value, Mapping):
        return {k: encode_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_value(v) for v in value]
    return value


def decode_value(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and "$pending" in value:
            return PendingId(value["$pending"])
        return {k: v if type(v) in _AS_IS else decode_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _AS_IS else decode_value(v) for v in value]
    return value


def finding_to_dict(f: Finding) -> dict[str, Any]:
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
        "key": encode_value(list(r.key)),
        "action": r.action.value,
        "payload": encode_value(r.payload),
        "source": place_to_dict(r.source),
        "row": r.row,
        "live_id": r.live_id,
        "live_updated_time": r.live_updated_time,
        "changes": [
            {"field": c.field, "old": encode_value(c.old), "new": encode_value(c.new), "pii": c.pii}
            for c in r.changes
        ],
        "status_path": list(r.status_path),
        "depends_on": list(r.depends_on),
        "refers_to": list(r.refers_to),
        "findings": [finding_to_dict(f) for f in r.findings],
        "blocked": r.blocked,
    } | ({"also_rows": [list(pair) for pair in r.also_rows]} if r.also_rows else {}) | _history_to_dict(r) | (
        {"renamed_from": encode_value(list(r.renamed_from))} if r.renamed_from is not None else {}) | (
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
        found["confirmed_values"] = {name: encode_value(value) for name, value in r.confirmed_values}
    return found


def _outcome_to_dict(o: FieldOutcome) -> dict[str, Any]:
    return {"field": o.field, "sheet": encode_value(o.sheet), "live": encode_value(o.live),
            "last_loaded": encode_value(o.last_loaded), "changed_by": o.changed_by, "changed_at": o.changed_at,
            "pii": o.pii, "seen": o.seen} | (
                {"editor": o.editor} if o.editor else {})  # never the e-mail address: plan.json travels


def _outcome_from_dict(d: Mapping[str, Any]) -> FieldOutcome:
    return FieldOutcome(d["field"], decode_value(d.get("sheet")), decode_value(d.get("live")),
                        decode_value(d.get("last_loaded")), d.get("changed_by"), d.get("changed_at"),
                        d.get("pii", False), d.get("seen", False), d.get("editor"))


def finding_from_dict(d: Mapping[str, Any]) -> Finding:
    where, rule = d.get("where"), d.get("rule")
    return Finding(d["severity"], d["code"], d["message"], None if where is None else place_from_dict(where),
                   d.get("cause", ""), None if rule is None else place_from_dict(rule), d.get("key", ""))


def place_of_row(data: Mapping[str, Any]) -> CellRef:
    place = place_from_dict(data)
    return place if isinstance(place, CellRef) else CellRef(place.file)


_ACTIONS = {action.value: action for action in Action}


def record_maker() -> RecordReader:
    """What makes records of their parsed plan.json forms a batch at a time (`made(forms)`), sharing
    the names they repeat."""
    return RecordReader(consume=True)


_NO_HISTORY = (None, (), (), (), (), ())  # a record's three-way outcomes when it was planned two-way


_AS_IS = frozenset({str, int, float, bool, type(None)})  # JSON scalars: decoded as they are


class RecordReader:
    """Records from their plan.json forms, the names they repeat shared and their values decoded
    without the generic `decode_value` where they are plain. `consume`: the forms are the parser's own,
    used up (see `plan_from_parsed`); else they are left as they were."""

    def __init__(self, consume: bool, batches: Callable[[int], Iterable[list[Any]]] | None = None) -> None:
        self.consume = consume
        self.batches = batches
        self.free: Callable[[Any], Any] = _decode_value_in_place if consume else decode_value
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
            tuple(key) if _plain_list(key) else tuple(decode_value(k) for k in key),
            _ACTIONS[r["action"]], free(r["payload"]), self.source(r["source"]), r["live_id"],
            r["live_updated_time"],
            tuple([FieldChange(c["field"], _scalar_or(free, c["old"]), _scalar_or(free, c["new"]),
                                c.get("pii", False)) for c in changes]) if changes else (),
            _tuple(r["status_path"]), _tuple(r["depends_on"]),
            tuple([finding_from_dict(f) for f in findings]) if findings else (),
            r["blocked"], r["row"], _tuple(r.get("refers_to")),
            tuple([(b, n) for b, n in r["also_rows"]]) if "also_rows" in r else (),
            *history,
        )
        if "renamed_from" in r:  # a renumber (rare): its old key
            made = replace(made, renamed_from=tuple(decode_value(k) for k in r["renamed_from"]))
        return replace(made, retiring=True) if r.get("retiring") else made

    def source(self, d: Mapping[str, Any]) -> CellRef:
        row = d.get("row")
        if row is None or "line" in d or "cell" in d or "record" in d:
            return place_of_row(d)
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
        tuple((name, decode_value(value)) for name, value in sorted(r.get("confirmed_values", {}).items())),
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


def _decode_value_in_place(value: Any) -> Any:
    """`decode_value` of a value nobody else holds: its dicts and lists are kept (changed where a
    {"$pending": ref} stands in them), not copied."""
    kind = type(value)
    if kind is dict:
        if len(value) == 1 and "$pending" in value:
            return PendingId(value["$pending"])
        for name, item in value.items():  # values replaced, no key added: the iteration holds
            if type(item) not in _AS_IS:
                decoded = _decode_value_in_place(item)
                if decoded is not item:
                    value[name] = decoded
        return value
    if kind is list:
        for index, item in enumerate(value):
            if type(item) not in _AS_IS:
                value[index] = _decode_value_in_place(item)
        return value
    return decode_value(value)
