"""plan.json's seal: its last member, written by `loader plan --out`, by which `loader apply --plan`
knows the text is exactly as written and what the whole plan holds, before reading its records.

    ...,
      "digest": "sha256:…",
      "seal": {"sha256": …, "schema": …, "spans": …, "counts": …}
    }

`sha256` is the SHA-256 of the text before `,\n  "seal": ` (all of it but the seal: the head,
every record, the digest); `schema` the SHA-256 of plan.schema.json as it was when the text was
written (the writer's output is valid under it); `spans` where each block's records lie in the text
(byte offsets, as `loader.plan.plan_split` finds them; null for a block without records); `counts`
the plan's `loader.plan.plan_counts` figures. A text whose seal holds (`read_seal`) was written by a
loader with this schema and changed by nobody since, so its counts are the plan's, and it is valid
as a whole: apply checks it by its head and counts, then reads its records a batch at a time while
it writes (each batch still checked against the schema, and the counts compared at the end). A
seal is a checksum, not a signature: it tells a plan.json as written from one edited or damaged
since, which is refused on every read (SealBroken). A plan without a seal, or sealed under another
schema, is read and checked whole before the first write.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson

from loader.files.package_data import read_text
from loader.plan.plan_counts import PlanCounts

SEAL_OPEN = b',\n  "seal": '
TAIL_BYTES = 1 << 20  # the seal is looked for this far from the end at most


@dataclass(frozen=True)
class Seal:
    sha256: str
    schema: str
    spans: tuple[tuple[int, int] | None, ...]
    counts: PlanCounts


@cache
def schema_digest() -> str:
    return "sha256:" + hashlib.sha256(read_text("loader.schemas", "plan.schema.json").encode("utf-8")).hexdigest()


def seal_to_dict(seal: Seal) -> dict[str, Any]:
    c = seal.counts
    return {
        "sha256": seal.sha256,
        "schema": seal.schema,
        "spans": [None if span is None else list(span) for span in seal.spans],
        "counts": {"block_records": list(c.block_records), "record_errors": c.record_errors, "changes": c.changes,
                   "changes_partial": c.changes_partial, "scope": c.scope, "personal": list(c.personal),
                   "ordered": c.ordered},
    }


def seal_from_dict(data: Any) -> Seal | None:
    """The seal of its plan.json form; None for anything else."""
    try:
        c = data["counts"]
        counts = PlanCounts(tuple(map(int, c["block_records"])), int(c["record_errors"]), int(c["changes"]),
                            int(c["changes_partial"]), int(c["scope"]), tuple(map(str, c["personal"])),
                            c["ordered"] is True)
        spans = tuple(None if s is None else (int(s[0]), int(s[1])) for s in data["spans"])
        return Seal(str(data["sha256"]), str(data["schema"]), spans, counts)
    except (KeyError, TypeError, ValueError, IndexError):
        return None


class SealBroken(ValueError):
    """The plan.json text was changed after it was sealed: its seal, of this loader's schema, does
    not match it (a payload value, the digest or a count edited by hand)."""


def read_seal(text: bytes | bytearray) -> tuple[Seal, int] | None:
    """The seal of plan.json `text` and where it starts, when it holds: the text before it hashes
    to it, it was written under this loader's schema, and its spans lie in order inside that text
    between a block's brackets. None when there is no seal or one of another schema (a plan read
    whole); SealBroken when a seal of this schema is there and the text does not match it."""
    at = text.rfind(SEAL_OPEN, max(0, len(text) - TAIL_BYTES))
    if at < 0:
        return None
    try:
        tail = orjson.loads(b"{" + text[at + 1:])
    except orjson.JSONDecodeError:
        return None
    seal = seal_from_dict(tail.get("seal")) if isinstance(tail, dict) and len(tail) == 1 else None
    if seal is None or seal.schema != schema_digest():
        return None
    if len(seal.spans) != len(seal.counts.block_records) or \
            hashlib.sha256(memoryview(text)[:at]).hexdigest() != seal.sha256 or not _spans_hold(text, seal.spans, at):
        raise SealBroken("the plan was changed after `loader plan` wrote it: its seal does not match its text, "
                         "so it is not applied")
    return seal, at


def _spans_hold(text: bytes | bytearray, spans: tuple[tuple[int, int] | None, ...], end: int) -> bool:
    last = 0
    for span in spans:
        if span is None:
            continue
        start, stop = span
        if not last < start <= stop < end or text[start - 1] != ord("[") or text[stop:stop + 1] != b"\n":
            return False
        last = stop
    return True


def head_text(text: bytes | bytearray, seal: Seal, at: int) -> bytes:
    """The sealed document without its records (each block's `[...]` emptied) nor its seal."""
    pieces: list[bytes] = []
    start = 0
    for span in seal.spans:
        if span is not None:
            pieces.append(bytes(text[start:span[0]]))
            start = span[1]
    pieces += [bytes(text[start:at]), b"\n}"]
    return b"".join(pieces)


class Sealer:
    """The seal's hash and byte offsets while plan.json is written: `take` each chunk in order (`at`
    is then the byte offset after it), `flush` what was taken as UTF-8 (hashed) now and then."""

    def __init__(self) -> None:
        self.hash = hashlib.sha256()
        self.at = 0
        self.spans: list[tuple[int, int] | None] = []
        self.pending: list[str] = []

    def take(self, chunk: str) -> None:
        self.pending.append(chunk)
        self.at += len(chunk) if chunk.isascii() else len(chunk.encode("utf-8"))

    def flush(self) -> bytes:
        data = "".join(self.pending).encode("utf-8")
        self.pending.clear()
        self.hash.update(data)
        return data

    def seal(self, counts: PlanCounts) -> Seal:
        return Seal(self.hash.hexdigest(), schema_digest(), tuple(self.spans), counts)
