"""The plan's digest: SHA-256 over its canonical content, so a reviewed plan can be bound to an apply.

`loader apply MAPPING... --expect-digest sha256:…` makes the plan afresh and refuses unless it has
the digest the reviewed report showed. The digest covers every value the plan would send or show,
personal data included (so it changes when any value does; the digest reveals none of them):
the target (the environment the service reports, its loader name, the API version), every block with its records
(key, action, payload, field changes old and new, status path, dependencies, findings, blocked),
the "not in source" counts and the plan's `extra` (the entity profile's fingerprint; the reviewers'
decisions the plan matched, `loader.plan.decisions_pass`, without their reasons: a finding of a change
held by a decision is covered without its message, which quotes the reason).

Left out on purpose: `created_at` (the time of planning), the base URL (one service reached by
another address, e.g. a sandbox on another port, is the same target; apply checks the environment
the service reports), the input files' fingerprints (a comment
edited in a mapping changes no value, and every value read is in the records anyway) and each live
record's `metadata.updated.time` (a live record touched without changing anything managed would
otherwise break the binding; a change to a managed value shows in `changes`).

Canonical form: JSON (orjson) with sorted keys and no spaces; integral floats written as integers
(1.0 == 1), other floats as Python's repr (not orjson's text, which may change with its version),
Decimal as its float, NaN and infinities as {"$float": "nan"}, dates and times as ISO text,
tuples as lists, sets as lists in the order of their items' canonical text, PendingId as
{"$pending": ref}, integers beyond 64 bits as their digits, dict keys that are not text as their
canonical value's text, any other type as {"$text": str(value)}.

The formula, in three levels so that each block can be hashed as soon as its part is planned:
`record_hash(record)` is the SHA-256 (32 bytes) of the record's canonical text, an array
`[ref, entity, key, action, payload, source, row, live_id, changes, status_path, depends_on,
refers_to, findings, blocked]`, and for a record planned with a history `[history line digest,
fields kept, fields held, fields confirmed]` after them (source as [file, sheet, cell, row, repeat]; changes as
[field, old, new, pii] sorted by field; dependencies and findings sorted). `block_digest(block)`
is the hex SHA-256 of the block's head's canonical text followed by its records' hashes, records
sorted by ref; the head an object of its name, entity, source file, sheet, key fields, findings
(sorted), not-in-source count and records (sorted) and blocked rows (planned with a history: its
mapping file and dropped records instead of the records not managed here, section 10).
`plan_digest(plan)` is `sha256:` and the hex SHA-256 of `[FORMULA, head, [block digests in plan
order]]`, the head an object of the plan's environment, loader name, API version, findings and
`extra`. The formula is the loader's own: a plan reviewed with one loader version is applied with
the same version, and FORMULA names this one (the first, one SHA-256 over the whole text, and the
second, a block's records' texts hashed whole, gave other digests).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from operator import attrgetter, itemgetter
from typing import Any

import orjson

from loader.findings import Finding
from loader.places import CellRef
from loader.plan.model import BlockPlan, FieldChange, PendingId, Plan, RecordPlan, extra_of

DIGEST_PREFIX = "sha256:"
FORMULA = "loader-plan-digest/3"  # records hashed apart, then blocks of their hashes, then the plan's head


def plan_digest(plan: Plan, block_digests: Sequence[str] | None = None) -> str:
    """`sha256:<64 hex>` over the plan's head and its blocks' digests in plan order (see the module
    docstring). `block_digests`, when given, must be `[block_digest(b) for b in plan.blocks]`
    (computed as each block was planned); they are not computed again."""
    if block_digests is None:
        history = plan.history_state is not None
        block_digests = [block_digest(b, with_history=history) for b in plan.blocks]
    elif len(block_digests) != len(plan.blocks) or not all(_is_hex_digest(d) for d in block_digests):
        raise ValueError(f"{len(plan.blocks)} blocks need as many block digests, each 64 hex digits")
    text = _encode([FORMULA, _canonical(_content_head(plan)), list(block_digests)])
    return DIGEST_PREFIX + hashlib.sha256(text).hexdigest()


def _is_hex_digest(text: str) -> bool:
    return len(text) == 64 and set(text) <= _HEX


_HEX = frozenset("0123456789abcdef")


def block_digest(block: BlockPlan, *, with_history: bool = False) -> str:
    """The hex SHA-256 of one block's head's canonical text and its records' hashes (sorted by ref).

    `with_history`: the plan was compared against a history (its `history_state`; section 10's
    digest).
    """
    hasher = hashlib.sha256(_encode(_block_head(block, with_history)))
    records = sorted(block.records, key=_REF)
    hasher.update(b"".join(map(record_hash, records)))
    return hasher.hexdigest()


def record_hash(record: RecordPlan) -> bytes:
    """The SHA-256 (32 bytes) of a record's canonical text, as `block_digest` takes it."""
    return hashlib.sha256(record_text(record)).digest()


def record_text(record: RecordPlan) -> bytes:
    """A record's canonical text (JSON)."""
    row = _record(record)
    try:
        return _encode(row)
    except orjson.JSONEncodeError:  # a plain-looking value with an int beyond 64 bits or a key not text
        return _encode(_canonical(row))


def shown_digest(plan: Plan) -> str:
    """The digest a report shows: the one recorded when the plan was made (a plan read back from
    plan.json has its personal values masked, so it cannot be computed again), else computed."""
    return plan.digest or plan_digest(plan)


_REF = attrgetter("ref")


def _encode(value: Any) -> bytes:
    """Canonical JSON bytes of a value made of plain values (str, int, bool, None, dict with text
    keys, list, tuple, PendingId) or of `_canonical`'s output. A text holding a lone surrogate (a
    CSV read with escaped bytes, a service answer's `\\udcff`) is not UTF-8: it is written as its
    surrogate-passing bytes in hex, a form no other value takes."""
    try:
        return orjson.dumps(value, default=_pending, option=_OPTIONS)
    except orjson.JSONEncodeError as error:
        if "surrogates" not in str(error):
            raise
        return orjson.dumps(_surrogates_marked(value), default=_pending, option=_OPTIONS)


def _surrogates_marked(value: Any) -> Any:
    if isinstance(value, str):
        hexed = _surrogate_hex(value)
        return value if hexed is None else {"$surrogates": hexed}
    if isinstance(value, Mapping):  # a key stays text: the marker is spelled into it
        return {_marked_key(k): _surrogates_marked(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_surrogates_marked(v) for v in value]
    return value


def _surrogate_hex(text: str) -> str | None:
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").hex()
    return None


def _marked_key(key: Any) -> Any:
    hexed = _surrogate_hex(key) if isinstance(key, str) else None
    return key if hexed is None else f"$surrogates:{hexed}"


# Dataclasses, datetimes and subclasses of str, int, dict and list come to `_pending` (never in
# orjson's own form, which would differ from the canonical one), so only plain values reach orjson.
_OPTIONS = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
            | orjson.OPT_PASSTHROUGH_SUBCLASS)


def _pending(value: Any) -> Any:
    """orjson's `default`: a PendingId in a plain record (the only non-JSON value one may hold)."""
    if type(value) is PendingId:
        return {"$pending": value.ref}
    raise TypeError(f"not canonical: {type(value).__name__}")


def _content_head(plan: Plan) -> dict[str, Any]:
    """The plan's content but its blocks (each hashed apart, `block_digest`)."""
    return {
        "environment": plan.environment,
        "env_name": plan.env_name,
        "api_version": plan.api_version,
        "findings": _findings(plan.findings),
        "extra": extra_of(plan),
    }


def _block_head(block: BlockPlan, with_history: bool = False) -> dict[str, Any]:
    """A block's content, but its records (sorted by ref, hashed in batches), in canonical form."""
    head: dict[str, Any] = _canonical({
        "name": block.name,
        "entity": block.entity,
        "source_file": block.source_file,
        "sheet": block.sheet,
        "not_in_source": block.not_in_source,
        "key_fields": block.key_fields,
        "findings": _findings(block.findings),
        "blocked_rows": [[str(b.source), b.key, b.live_id, _findings(b.errors)] for b in block.blocked_rows],
    })
    if with_history:  # section 10's digest
        # not the records not managed here (one created in the platform after the review keeps the
        # binding), but the records dropped from the source
        del head["not_in_source"]
        head["mapping_file"] = block.mapping_file
        if block.formerly is not None:  # a plan without a rename keeps the digest it had before
            head["formerly"] = list(block.formerly)
        head["dropped"] = _sorted_by_text([list(d.key), d.id] for d in block.dropped)
        return head
    # in the order of their canonical texts (fragments of it, which `_canonical` must not walk again)
    head["not_in_source_records"] = _sorted_by_text([list(n.key), n.id] for n in block.not_in_source_records)
    return head


def _record(record: RecordPlan) -> tuple[Any, ...]:
    """A record's covered values, in the order the module docstring lists them (an array: building a
    dict of them cost more than encoding it), its free-form ones (key, payload, old and new values)
    in canonical form."""
    depends_on, refers_to = record.depends_on, record.refers_to
    return (
        record.ref,
        record.entity,
        _free(record.key),
        record.action._value_,  # the member's value without the `.value` property's call
        _free(record.payload),
        _place(record.source),
        record.row,
        record.live_id,
        _changes(record.changes) if record.changes else (),
        record.status_path,
        sorted(depends_on) if len(depends_on) > 1 else depends_on,
        sorted(refers_to) if len(refers_to) > 1 else refers_to,
        _findings(record.findings) if record.findings else (),
        record.blocked,
    ) + (_history(record) if record.history_line is not None or record.kept or record.conflicts else ())


def _history(record: RecordPlan) -> tuple[Any, ...]:
    """With a history: the W values compared against (the line's digest) and the fields kept and held."""
    return (record.history_line, [o.field for o in record.kept], [o.field for o in record.conflicts],
            list(record.confirmed))


def _place(source: CellRef) -> Any:
    """A row's place as its parts ([file, sheet, cell, row, repeat]), cheaper than its text."""
    if type(source) is CellRef:
        return (source.file, source.sheet, source.cell, source.row, source.repeat)
    return str(source)


def _changes(changes: tuple[FieldChange, ...]) -> list[tuple[Any, ...]]:
    rows = [(c.field, c.old if type(c.old) in _SCALARS else _free(c.old),
             c.new if type(c.new) in _SCALARS else _free(c.new), c.pii) for c in changes]
    if len(rows) > 1:
        rows.sort(key=_FIELD)
    return rows


_FIELD = itemgetter(0)


def _findings(findings: tuple[Finding, ...]) -> list[list[str | None]]:
    return sorted(([f.severity, f.code, None if f.code in _DECIDED else f.message,
                    None if f.where is None else str(f.where)] for f in findings),
                  key=lambda f: [x or "" for x in f])


# A change held (or a conflict settled) by a reviewer's decision: its message holds the decision's
# reason, which the digest leaves out (the decision itself is covered through the plan's `extra`,
# loader.plan.decisions_pass).
_DECIDED = frozenset({"skipped-by-decision", "written-by-decision"})


_SCALARS = frozenset({str, int, bool, type(None), PendingId})


def _free(value: Any) -> Any:
    """A free-form value (a key, a payload, an old or new value) in canonical form: as it is where it
    is plain (str, int, bool, None, PendingId, dicts, lists and tuples of them, which orjson writes in
    canonical form), else walked by `_canonical`: the check is much cheaper than the walk it saves."""
    return value if type(value) in _SCALARS or _plain(value) else _canonical(value)


def _plain_values(values: Iterable[Any]) -> bool:
    for value in values:  # a loop, not all(...): the generator cost more than the check
        if type(value) not in _SCALARS and not _plain(value):
            return False
    return True


def _plain(value: Any) -> bool:
    kind = type(value)
    if kind is dict:
        return _plain_values(value.values())
    if kind is list or kind is tuple:
        return _plain_values(value)
    return kind in _SCALARS


_PLAIN = frozenset({str, bool, type(None), PendingId})  # as they are (a PendingId: `_pending` writes it)
_INT_RANGE = range(-(2**63), 2**64)  # what orjson writes as a number; beyond it, digits as a fragment


def _canonical(value: Any) -> Any:
    """A value orjson writes the same for equal plan values on any machine."""
    kind = type(value)
    if kind in _PLAIN or kind is orjson.Fragment:  # a fragment: canonical text made here
        return value
    if kind is int:
        return value if value in _INT_RANGE else orjson.Fragment(str(value).encode())
    if kind is float:
        return _canonical_float(value)
    if kind is dict:
        return {k if type(k) is str else _key(k): v if type(v) in _PLAIN else _canonical(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [v if type(v) in _PLAIN else _canonical(v) for v in value]
    if isinstance(value, str):  # a subclass (a StrEnum): its text, whatever its __str__ says
        return str.__str__(value)
    if isinstance(value, int):  # bool is final: only int and its subclasses (an IntEnum) come here
        number = int.__int__(value)
        return number if number in _INT_RANGE else orjson.Fragment(str(number).encode())
    if isinstance(value, float):
        return _canonical_float(float(value))
    if isinstance(value, Decimal):
        return _canonical(float(value)) if value.is_finite() else {"$float": str(value)}
    if isinstance(value, Enum):
        return _canonical(value.value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, PendingId):
        return {"$pending": value.ref}
    if isinstance(value, Mapping):
        return {k if type(k) is str else _key(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return _sorted_by_text(value)
    return {"$text": str(value)}


def _canonical_float(value: float) -> Any:
    """An integral float as its int, NaN and infinities marked, any other float as Python's repr:
    the shortest text that reads back as it, the same on any machine (orjson's own float text may
    change from one orjson version to another)."""
    if not math.isfinite(value):
        return {"$float": repr(value)}
    return _canonical(int(value)) if value.is_integer() else orjson.Fragment(repr(value).encode())


def _key(key: Any) -> str:
    """A dict key that is not text as text: its canonical value's (1.0 and 1 are one key)."""
    value = _canonical(key)
    return value if type(value) is str else _encode(value).decode()


def _sorted_by_text(values: Iterable[Any]) -> list[orjson.Fragment]:
    """The values' canonical texts in order: the same list for equal values in any order."""
    return [orjson.Fragment(text) for text in sorted(_encode(_canonical(v)) for v in values)]
