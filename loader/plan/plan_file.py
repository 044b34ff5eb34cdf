"""plan.json: everything `loader apply --plan` needs, described by schemas/plan.schema.json.

Written with mode 0600 from the start (os.open), because payloads keep the values to send,
PII included; only `changes` (what reviewers read) are masked. Deterministic apart from the one
`created_at` line. Its last member is its seal (`loader.plan.plan_seal`), which lets `loader apply
--plan` check it by its head and counts and read its records while it writes
(`loader.plan.plan_stream`). A name ending in `.gz` is written gzip-compressed (`loader.files.gzipped`: no
name or time in its header); reading tells gzip by its first bytes, whatever the name, and
MAX_PLAN_BYTES bounds the unpacked text as it bounds a plain file.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache, partial
from pathlib import Path
from typing import Any, TypeVar

import jsonschema_rs
import orjson

from loader.errors import PlanError
from loader.files.gzipped import gunzip_limited, gzip_writer, is_gzip
from loader.files.inputs import decode_utf8, read_regular_file
from loader.files.package_data import schema as package_schema
from loader.files.safe_write import replacing
from loader.plan.digest import shown_digest
from loader.plan.masking import masked_record
from loader.plan.model import BlockPlan, Plan, RecordPlan
from loader.plan.plan_counts import plan_counts
from loader.plan.plan_dict import block_to_dict, plan_from_batches, plan_from_parsed, plan_head_to_dict
from loader.plan.plan_seal import SEAL_OPEN, Sealer, read_seal, seal_to_dict
from loader.plan.plan_split import record_batches, split_plan
from loader.plan.record_form import record_to_dict

T = TypeVar("T")
MAX_PLAN_BYTES = 4 * 1024 * 1024 * 1024  # room for plans of a few million records


@cache
def plan_schema() -> dict[str, Any]:
    return package_schema("plan.schema.json")


def plan_json_text(plan: Plan) -> str:
    """The plan.json text: plan_to_dict of the plan with PII masked in `changes`, its digest and its seal."""
    return "".join(plan_json_chunks(plan))


def plan_json_chunks(plan: Plan) -> Iterator[str]:
    """The plan.json text a record at a time (see `plan_json_bytes`)."""
    return (chunk.decode("utf-8") for chunk in plan_json_bytes(plan))


def plan_json_bytes(plan: Plan) -> Iterator[bytes]:
    """The plan.json text a few thousand pieces at a time, UTF-8: exactly `json.dumps(data, indent=2,
    ensure_ascii=False)` of plan_to_dict(masked_plan(plan)) with its digest and, last, its seal
    (`loader.plan.plan_seal`), without holding that data, a masked copy of the plan or the text
    whole."""
    head = plan_head_to_dict(plan)
    mark = f"blocks-{uuid.uuid4().hex}"  # stands where the blocks go; no value can spell it
    head["blocks"] = mark
    head["digest"] = shown_digest(plan)  # computed before masking: every value counts
    before, after = _dumped(head).split(json.dumps(mark), 1)
    sealer = Sealer()
    sealer.take(before)
    for chunk in _list_of(plan.blocks, 4, partial(_block_chunks, sealer=sealer)):
        sealer.take(chunk)
        if len(sealer.pending) >= 4096:
            yield sealer.flush()
    assert after.endswith("\n}")
    sealer.take(after[:-2])
    yield sealer.flush()
    seal = seal_to_dict(sealer.seal(plan_counts(plan)))
    yield (SEAL_OPEN.decode() + _dumped(seal, 2) + "\n}\n").encode("utf-8")


def _block_chunks(block: BlockPlan, indent: int, sealer: Sealer) -> Iterator[str]:
    """A block's text; where its records lie noted in `sealer` (which takes each chunk before the next)."""
    mark = f"records-{uuid.uuid4().hex}"
    before, after = _dumped(block_to_dict(block, mark), indent).split(json.dumps(mark), 1)
    yield before
    if not block.records:
        sealer.spans.append(None)
        yield "[]"
    else:
        yield "["
        start = sealer.at
        yield from _list_of(block.records, indent + 4, _record_chunks, opened=True)
        sealer.spans.append((start, sealer.at - (indent + 4)))  # the `\n` before its `]`, then its indent
    yield after


def _record_chunks(record: RecordPlan, indent: int) -> Iterator[str]:
    yield _dumped(record_to_dict(masked_record(record)), indent)


def _list_of(items: Sequence[T], indent: int, chunks: Callable[[T, int], Iterator[str]],
             opened: bool = False) -> Iterator[str]:
    """A JSON list as json.dumps(indent=2) writes it at this depth (`indent`: its items' indentation);
    `opened`: its `[` is written already (the list is not empty)."""
    if not items:
        yield "[]"
        return
    yield "\n" if opened else "[\n"
    last = len(items) - 1
    for index, item in enumerate(items):
        yield " " * indent
        yield from chunks(item, indent)
        yield ",\n" if index < last else "\n"
    yield " " * (indent - 2) + "]"


def _dumped(value: Any, indent: int = 0) -> str:
    """json.dumps(value, indent=2) as it reads nested `indent` spaces deep (JSON text has no raw newlines)."""
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + " " * indent)


def write_plan_json(plan: Plan, path: Path) -> None:
    """Write plan.json readable by its owner only (0600), replacing any file there, a block of records
    at a time; gzip-compressed when its name ends in `.gz` (the same plan gives the same bytes)."""
    with replacing(path) as handle:
        if path.suffix.lower() == ".gz":
            with gzip_writer(handle) as packed:
                _write_chunks(plan, packed.write)
        else:
            _write_chunks(plan, handle.write)


def _write_chunks(plan: Plan, write: Callable[[bytes], object]) -> None:
    for chunk in plan_json_bytes(plan):  # thousands of records' text at a time
        write(chunk)


@cache
def validators() -> tuple[jsonschema_rs.Validator, jsonschema_rs.Validator]:
    """The validators of a whole plan and of a list of records (plan.schema.json's)."""
    schema = plan_schema()
    records = {"$schema": schema["$schema"], "type": "array", "items": {"$ref": "#/$defs/record"},
               "$defs": schema["$defs"]}
    return jsonschema_rs.validator_for(schema), jsonschema_rs.validator_for(records)


def validation_errors(data: Any) -> list[str]:
    """Every way `data` breaks plan.schema.json, as `path: message` lines in the order of their paths."""
    whole = validators()[0]
    if whole.is_valid(data):
        return []
    errors = sorted(whole.iter_errors(data), key=lambda e: list(map(str, e.instance_path)))
    return [f"{'/'.join(map(str, e.instance_path)) or '(root)'}: {_message(e)}" for e in errors]


def _message(error: jsonschema_rs.ValidationError) -> str:
    """The validator's message, with the names and values it quotes as Python writes them ('delete')."""
    kind = error.kind
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Required):
        return f"{kind.property!r} is a required property"
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Enum):
        return f"{error.instance!r} is not one of {kind.options!r}"
    return error.message


class _NotSplit(Exception):
    """The text cannot be read a batch of records at a time: it is parsed whole (and its problems named)."""


HINT = "write it again with `loader plan ... --out plan.json`; do not edit it by hand"


def read_plan_json(path: Path, *, limit: int = MAX_PLAN_BYTES) -> Plan:
    """A plan.json (or plan.json.gz: gzip is told by its first bytes) checked against its schema;
    PlanError naming every problem otherwise (`plan_of_text`)."""
    with plan_errors(path):
        text = read_plan_bytes(path, limit)
        read_seal(text)  # a plan edited since it was sealed is refused here as in `apply --plan`
        return plan_of_text(text, path)


@contextmanager
def plan_errors(path: Path) -> Iterator[None]:
    """A plan file that is not there or cannot be read, as PlanError (other PlanErrors pass)."""
    try:
        yield
    except FileNotFoundError:
        raise PlanError("the plan file is not there", where=str(path), hint=HINT) from None
    except RecursionError:
        raise PlanError("the plan file cannot be read: it is nested too deeply", where=str(path), hint=HINT) from None
    except (OSError, ValueError) as exc:
        raise PlanError(f"the plan file cannot be read: {exc}", where=str(path), hint=HINT) from None


def plan_of_text(text: bytes | bytearray, path: Path) -> Plan:
    """The plan of plan.json's text, checked against its schema; PlanError naming every problem
    otherwise (`path` names the file in it). Errors reading it are raised as they come
    (`plan_errors` words them).

    Read a batch of records at a time where the file is laid out as `loader plan --out` writes it
    (`loader.plan.plan_split`), each batch checked against the schema before its records are made;
    any other text, and any plan the schema refuses, is parsed and checked whole.
    """
    try:
        return _read_in_batches(text)
    except _NotSplit:
        pass
    data = _parsed_whole(text)
    del text
    problems = validation_errors(data)
    if problems:
        listed = "\n  ".join(problems[:20])
        raise PlanError(f"the plan file is not a valid plan:\n  {listed}", where=str(path), hint=HINT)
    return plan_from_parsed(data)


def read_plan_bytes(path: Path, limit: int = MAX_PLAN_BYTES) -> bytes | bytearray:
    """plan.json's bytes, unpacked when they are gzip; InputRefused (an OSError) past `limit` bytes
    of either, and for gzip data that ends early or is damaged."""
    data = read_regular_file(path, limit=limit)
    return gunzip_limited(data, limit) if is_gzip(data) else data


def _read_in_batches(text: bytes | bytearray) -> Plan:
    """The plan, read and checked a batch of records at a time; _NotSplit when it cannot be, or
    when the schema refuses any part of it (the whole document is checked again for the messages)."""
    split = split_plan(text)
    if split is None:
        raise _NotSplit
    whole, records = validators()
    if not whole.is_valid(split.head):
        raise _NotSplit

    def batches(index: int) -> Iterator[list[Any]]:
        span = split.spans.get(index)
        for batch in () if span is None else record_batches(text, span):
            if not records.is_valid(batch):
                raise _NotSplit
            yield batch

    try:
        return plan_from_batches(split.head, batches)
    except orjson.JSONDecodeError:
        raise _NotSplit from None


def _parsed_whole(text: bytes | bytearray) -> Any:
    """The JSON document: orjson's reading, else (a BOM, NaN, an integer beyond 64 bits, bad UTF-8 or
    bad JSON) the standard library's, whose errors name the line and column."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(decode_utf8(bytes(text)))
