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

Canonical form: `loader.plan.canonical`'s (sorted keys, floats as Python writes them, sets in
the order of their items' texts, any value equal in the plan written the same on any machine).

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
from collections.abc import Sequence
from operator import attrgetter, itemgetter
from typing import Any

import orjson

from loader.findings import Finding
from loader.places import CellRef
from loader.plan.canonical import SCALARS, canonical, encode, free, sorted_by_text
from loader.plan.model import BlockPlan, FieldChange, Plan, RecordPlan, extra_of

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
    text = encode([FORMULA, canonical(_content_head(plan)), list(block_digests)])
    return DIGEST_PREFIX + hashlib.sha256(text).hexdigest()


def _is_hex_digest(text: str) -> bool:
    return len(text) == 64 and set(text) <= _HEX


_HEX = frozenset("0123456789abcdef")


def block_digest(block: BlockPlan, *, with_history: bool = False) -> str:
    """The hex SHA-256 of one block's head's canonical text and its records' hashes (sorted by ref).

    `with_history`: the plan was compared against a history (its `history_state`; section 10's
    digest).
    """
    hasher = hashlib.sha256(encode(_block_head(block, with_history)))
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
        return encode(row)
    except orjson.JSONEncodeError:  # a plain-looking value with an int beyond 64 bits or a key not text
        return encode(canonical(row))


def shown_digest(plan: Plan) -> str:
    """The digest a report shows: the one recorded when the plan was made (a plan read back from
    plan.json has its personal values masked, so it cannot be computed again), else computed."""
    return plan.digest or plan_digest(plan)


_REF = attrgetter("ref")


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
    head: dict[str, Any] = canonical({
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
        head["dropped"] = sorted_by_text([list(d.key), d.id] for d in block.dropped)
        return head
    # in the order of their canonical texts (fragments of it, which `_canonical` must not walk again)
    head["not_in_source_records"] = sorted_by_text([list(n.key), n.id] for n in block.not_in_source_records)
    return head


def _record(record: RecordPlan) -> tuple[Any, ...]:
    """A record's covered values, in the order the module docstring lists them (an array: building a
    dict of them cost more than encoding it), its free-form ones (key, payload, old and new values)
    in canonical form."""
    depends_on, refers_to = record.depends_on, record.refers_to
    return (
        record.ref,
        record.entity,
        free(record.key),
        record.action._value_,  # the member's value without the `.value` property's call
        free(record.payload),
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
    rows = [(c.field, c.old if type(c.old) in SCALARS else free(c.old),
             c.new if type(c.new) in SCALARS else free(c.new), c.pii) for c in changes]
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
