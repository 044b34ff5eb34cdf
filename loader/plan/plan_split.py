"""plan.json's records read a batch at a time, so the parsed document is never whole in memory.

Parsed whole, a large plan.json becomes several times its size in dicts and lists before a record
is made of them (docs/performance.md). `split_plan` finds, in the text as `loader plan --out` lays it out
(`json.dumps(indent=2)`), each block's `"records": [` ... `]`, and returns the document without
them (its `head`: every block's records a marker standing for them) and, per block, where its
records' text lies. `record_batches` cuts such a span into batches of about a mebibyte, each a
JSON array of whole records.

Nothing here trusts the layout: JSON text holds no raw line break inside a string, and a batch is
cut only where a record ends (`},` then the next record's `{`), so the records' text is exactly the
batches joined by commas: if the head parses with each marker in the place of a block's records,
and every batch parses as an array, the document is the head with the batches' records in place of
the markers, value for value. A text laid out otherwise (no marker found where a block's records
are, a batch that does not parse) gives None or raises ValueError, and the caller parses it whole.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

RECORDS_OPEN = b'\n      "records": ['  # a block's records in the layout of json.dumps(indent=2)
RECORDS_BODY = b"\n        {"
RECORDS_CLOSE = b"\n      ]"
RECORD_END = b"\n        },\n        {"  # one record ends, the next begins
BATCH_BYTES = 1 << 20


@dataclass(frozen=True)
class SplitPlan:
    """plan.json without its records: `head` (each block's "records" emptied), and per block index
    where its records' text lies in the document ((start, end), both within its brackets)."""

    head: dict[str, Any]
    spans: dict[int, tuple[int, int]]


def split_plan(text: bytes | bytearray) -> SplitPlan | None:
    """The head and the records' spans of plan.json `text`, or None when it is not laid out as
    `loader plan --out` writes it (or does not parse)."""
    tag = f"loader-records-{uuid.uuid4().hex}-"
    pieces: list[bytes | bytearray] = []
    spans: list[tuple[int, int]] = []
    at = looked = 0  # the head's text taken up to `at`; looked for records from `looked`
    while (found := text.find(RECORDS_OPEN, looked)) >= 0:
        bracket = found + len(RECORDS_OPEN) - 1
        looked = bracket
        if text[bracket + 1:bracket + 1 + len(RECORDS_BODY)] != RECORDS_BODY:
            continue  # `[]`, or not this layout: parsed with the head
        close = text.find(RECORDS_CLOSE, bracket)
        if close < 0:
            return None
        pieces += [text[at:bracket], orjson.dumps(f"{tag}{len(spans)}")]
        spans.append((bracket + 1, close))
        at = looked = close + len(RECORDS_CLOSE)
    pieces.append(text[at:])
    try:
        head = orjson.loads(b"".join(pieces))
    except orjson.JSONDecodeError:
        return None
    placed = _placed(head, tag, len(spans))
    return None if placed is None else SplitPlan(head, {block: spans[n] for block, n in placed.items()})


def _placed(head: Any, tag: str, count: int) -> dict[int, int] | None:
    """block index -> marker number, when each marker stands as one block's records (and nowhere
    else a marker could have been parsed into); the head's records become []."""
    blocks = head.get("blocks") if isinstance(head, dict) else None
    if not isinstance(blocks, list):
        return None if count else {}
    placed: dict[int, int] = {}
    for index, block in enumerate(blocks):
        records = block.get("records") if isinstance(block, dict) else None
        if isinstance(records, str) and records.startswith(tag):
            placed[index] = int(records[len(tag):])
            block["records"] = []
    return placed if sorted(placed.values()) == list(range(count)) else None


def record_batches(text: bytes | bytearray, span: tuple[int, int], size: int = BATCH_BYTES) -> Iterator[list[Any]]:
    """The records in `span` (from `split_plan`), parsed a batch of about `size` bytes at a time.
    ValueError (orjson.JSONDecodeError) when a batch does not parse: the text is not a plan's."""
    start, end = span
    while start < end:
        cut = text.find(RECORD_END, start + size, end) if start + size < end else -1
        stop = end if cut < 0 else cut + len(RECORD_END) - len(RECORDS_BODY) - 1  # just after the `}`
        batch = orjson.loads(b"[" + text[start:stop] + b"]")
        yield batch
        start = stop + 1 if cut >= 0 else end  # past the comma
