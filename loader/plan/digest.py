"""The plan's digest: SHA-256 over its canonical content, so a reviewed plan can be bound to an apply.

`loader apply MAPPING... --expect-digest sha256:…` makes the plan afresh and refuses unless it has
the digest the reviewed report showed. The digest covers every value the plan would send or show,
personal data included (so it changes when any value does; the digest reveals none of them):
the target (the environment the service reports, its loader name, the API version), every block with its records
(key, action, payload, field changes old and new, status path, dependencies, findings, blocked),
the "not in source" counts and the plan's `extra` (the entity profile's fingerprint).

Left out on purpose: `created_at` (the time of planning), the base URL (one service reached by
another address, e.g. a sandbox on another port, is the same target; apply checks the environment
the service reports), the input files' fingerprints (a comment
edited in a mapping changes no value, and every value read is in the records anyway) and each live
record's `metadata.updated.time` (a live record touched without changing anything managed would
otherwise break the binding; a change to a managed value shows in `changes`).

Canonical form: JSON with sorted keys and no spaces; blocks in plan order, records sorted by `ref`,
findings sorted; integral floats written as integers (1.0 == 1), dates as ISO text, tuples as lists.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Iterator, Mapping
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from typing import Any

from loader.findings import Finding
from loader.plan.model import BlockPlan, PendingId, Plan, RecordPlan

DIGEST_PREFIX = "sha256:"


def plan_digest(plan: Plan) -> str:
    """`sha256:<64 hex>` over the plan's canonical content (see the module docstring), hashed a record
    at a time: the canonical text of 250,000 records whole took hundreds of megabytes."""
    hasher = hashlib.sha256()
    for chunk in _canonical_chunks(plan):
        hasher.update(chunk.encode("utf-8"))
    return DIGEST_PREFIX + hasher.hexdigest()


def _canonical_chunks(plan: Plan) -> Iterator[str]:
    """The canonical text of the content (`_content_head` with each block: `_block_head` and its
    `_record`s sorted by ref), a block and a batch of records at a time."""
    mark = f"blocks-{uuid.uuid4().hex}"  # stands where the blocks go; no value can spell it
    before, after = _text({**_content_head(plan), "blocks": mark}).split(json.dumps(mark), 1)
    yield before + "["
    for index, block in enumerate(plan.blocks):
        records_mark = f"records-{uuid.uuid4().hex}"
        head, tail = _text({**_block_head(block), "records": records_mark}).split(json.dumps(records_mark), 1)
        yield ("," if index else "") + head + "["
        records = sorted(block.records, key=lambda r: r.ref)
        for start in range(0, len(records), _BATCH):
            batch = _text([_record(r) for r in records[start:start + _BATCH]])  # "[a,b,...]": the items
            yield ("," if start else "") + batch[1:-1]
        yield "]" + tail
    yield "]" + after


_BATCH = 1_000  # records encoded in one call: a call each cost a tenth of the digest
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _text(value: Any) -> str:
    return _ENCODER.encode(_canonical(value))


def shown_digest(plan: Plan) -> str:
    """The digest a report shows: the one recorded when the plan was made (a plan read back from
    plan.json has its personal values masked, so it cannot be computed again), else computed."""
    return plan.digest or plan_digest(plan)


def _content_head(plan: Plan) -> dict[str, Any]:
    """The content the digest covers, but its blocks (hashed a record at a time)."""
    return {
        "environment": plan.environment,
        "env_name": plan.env_name,
        "api_version": plan.api_version,
        "findings": _findings(plan.findings),
        "extra": plan.extra,
    }


def _block_head(block: BlockPlan) -> dict[str, Any]:
    """A block's content, but its records (sorted by ref, hashed in batches)."""
    return {
        "name": block.name,
        "entity": block.entity,
        "source_file": block.source_file,
        "sheet": block.sheet,
        "not_in_source": block.not_in_source,
        "key_fields": block.key_fields,
        "findings": _findings(block.findings),
        "not_in_source_records": sorted([[list(n.key), n.id] for n in block.not_in_source_records], key=str),
        "blocked_rows": [[str(b.source), b.key, b.live_id, _findings(b.errors)] for b in block.blocked_rows],
    }


def _record(record: RecordPlan) -> dict[str, Any]:
    return {
        "ref": record.ref,
        "entity": record.entity,
        "key": record.key,
        "action": record.action.value,
        "payload": record.payload,
        "source": str(record.source),
        "row": record.row,
        "live_id": record.live_id,
        "changes": sorted(([c.field, c.old, c.new, c.pii] for c in record.changes), key=lambda c: str(c[0])),
        "status_path": record.status_path,
        "depends_on": sorted(record.depends_on),
        "refers_to": sorted(record.refers_to),
        "findings": _findings(record.findings),
        "blocked": record.blocked,
    }


def _findings(findings: tuple[Finding, ...]) -> list[list[str | None]]:
    return sorted(([f.severity, f.code, f.message, None if f.where is None else str(f.where)] for f in findings),
                  key=lambda f: [x or "" for x in f])


_PLAIN = frozenset({str, int, bool, type(None)})


def _canonical(value: Any) -> Any:
    """A JSON value that is the same for equal plan values on any machine."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is dict:
        return {str(k): v if type(v) in _PLAIN else _canonical(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [v if type(v) in _PLAIN else _canonical(v) for v in value]
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return {"$float": repr(value)}
        return int(value) if value.is_integer() else value
    if isinstance(value, Decimal):
        return _canonical(float(value)) if value.is_finite() else {"$float": str(value)}
    if isinstance(value, Enum):
        return _canonical(value.value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, PendingId):
        return {"$pending": value.ref}
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return {"$text": str(value)}
