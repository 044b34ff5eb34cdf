"""plan.json: everything `loader apply --plan` needs, described by schemas/plan.schema.json.

Written with mode 0600 from the start (os.open), because payloads keep the values to send,
PII included; only `changes` (what reviewers read) are masked. Deterministic apart from the one
`created_at` line.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import jsonschema
import jsonschema_rs

from loader.errors import PlanError
from loader.files.inputs import decode_utf8, read_regular_file
from loader.files.package_data import schema as package_schema
from loader.files.private import open_private
from loader.plan.digest import shown_digest
from loader.plan.masking import masked_record
from loader.plan.model import BlockPlan, Plan, RecordPlan
from loader.plan.plan_dict import block_to_dict, plan_from_dict, plan_head_to_dict, record_to_dict

T = TypeVar("T")
MAX_PLAN_BYTES = 1024 * 1024 * 1024  # plans of a million records stay well below


@cache
def plan_schema() -> dict[str, Any]:
    return package_schema("plan.schema.json")


def plan_json_text(plan: Plan) -> str:
    """The plan.json text: plan_to_dict of the plan with PII masked in `changes`, and its digest."""
    return "".join(plan_json_chunks(plan))


def plan_json_chunks(plan: Plan) -> Iterator[str]:
    """The plan.json text a record at a time: exactly `json.dumps(data, indent=2, ensure_ascii=False)`
    of plan_to_dict(masked_plan(plan)) with its digest, without holding that data, a masked copy of
    the plan or the text whole (250,000 records: about 2 GB more at the peak than the plan itself)."""
    head = plan_head_to_dict(plan)
    mark = f"blocks-{uuid.uuid4().hex}"  # stands where the blocks go; no value can spell it
    head["blocks"] = mark
    head["digest"] = shown_digest(plan)  # computed before masking: every value counts
    before, after = _dumped(head).split(json.dumps(mark), 1)
    yield before
    yield from _list_of(plan.blocks, 4, _block_chunks)
    yield after + "\n"


def _block_chunks(block: BlockPlan, indent: int) -> Iterator[str]:
    mark = f"records-{uuid.uuid4().hex}"
    before, after = _dumped(block_to_dict(block, mark), indent).split(json.dumps(mark), 1)
    yield before
    yield from _list_of(block.records, indent + 4, _record_chunks)
    yield after


def _record_chunks(record: RecordPlan, indent: int) -> Iterator[str]:
    yield _dumped(record_to_dict(masked_record(record)), indent)


def _list_of(items: Sequence[T], indent: int, chunks: Callable[[T, int], Iterator[str]]) -> Iterator[str]:
    """A JSON list as json.dumps(indent=2) writes it at this depth (`indent`: its items' indentation)."""
    if not items:
        yield "[]"
        return
    yield "[\n"
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
    """Write plan.json readable by its owner only (0600), replacing any file there, a block of records at a time."""
    with open_private(path) as handle:
        pending: list[str] = []
        for chunk in plan_json_chunks(plan):
            pending.append(chunk)
            if len(pending) >= 4096:
                handle.write("".join(pending).encode("utf-8"))
                pending.clear()
        handle.write("".join(pending).encode("utf-8"))


def validation_errors(data: Any) -> list[str]:
    """Every way `data` breaks plan.schema.json, as `path: message` lines.

    A valid plan (the common case) is recognised by jsonschema-rs: the Python validator took 576 µs
    a record (144 s for a 250,000-record plan, before apply sent anything), jsonschema-rs 2.7 µs.
    Only a plan it refuses is gone through again by the Python validator, whose messages name every
    problem the way the mapping files' do.
    """
    if jsonschema_rs.validator_for(plan_schema()).is_valid(data):
        return []
    validator = jsonschema.Draft202012Validator(plan_schema())
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
        for e in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    ]


def read_plan_json(path: Path) -> Plan:
    """A plan.json checked against its schema; PlanError naming every problem otherwise."""
    hint = "write it again with `loader plan ... --out plan.json`; do not edit it by hand"
    try:
        data = json.loads(decode_utf8(read_regular_file(path, limit=MAX_PLAN_BYTES)))
    except FileNotFoundError:
        raise PlanError("the plan file is not there", where=str(path), hint=hint) from None
    except RecursionError:
        raise PlanError("the plan file cannot be read: it is nested too deeply", where=str(path), hint=hint) from None
    except (OSError, ValueError) as exc:
        raise PlanError(f"the plan file cannot be read: {exc}", where=str(path), hint=hint) from None
    problems = validation_errors(data)
    if problems:
        listed = "\n  ".join(problems[:20])
        raise PlanError(f"the plan file is not a valid plan:\n  {listed}", where=str(path), hint=hint)
    return plan_from_dict(data)
