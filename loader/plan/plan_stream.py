"""A saved plan opened to be applied while its records are read (`loader apply --plan`).

    saved = open_saved_plan(Path("plan.json"))   # a Plan, or a SealedPlan

A plan.json whose seal holds (`loader.plan.plan_seal`: the text is as `loader plan --out` wrote
it, under this schema) and whose records each come after the records they need is opened as a
`SealedPlan`: its head (blocks without records) and its counts are known, checked against the
schema, in the time it takes to hash the text; `batches()` then makes its records a batch at a
time, each batch checked against the schema first, and at its end compares the plan's counts with
the seal's. Any other plan.json (written before plans had a seal, edited, or whose records do not
come in order) is read and checked whole, as `read_plan_json` reads it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from loader.errors import PlanError
from loader.plan.model import Plan, RecordPlan
from loader.plan.plan_counts import PlanCounts, plan_counts
from loader.plan.plan_dict import plan_from_made
from loader.plan.plan_file import (
    HINT,
    MAX_PLAN_BYTES,
    plan_errors,
    plan_of_text,
    read_plan_bytes,
    validators,
)
from loader.plan.plan_seal import Seal, head_text, read_seal
from loader.plan.plan_split import record_batches
from loader.plan.record_form import record_maker


class SealedPlan:
    """A sealed plan.json whose records are still to be made: `head` is the plan with no records in
    its blocks, `counts` the seal's figures of the whole plan."""

    def __init__(self, path: Path, text: bytes | bytearray, seal: Seal, head: dict[str, Any]) -> None:
        self.path = path
        self.counts: PlanCounts = seal.counts
        self.head = plan_from_made(head, [()] * len(seal.spans))
        self._head_data = head
        self._text: bytes | bytearray | None = text
        self._spans = seal.spans
        self._plan: Plan | None = None

    def batches(self) -> Iterator[list[RecordPlan]]:
        """The plan's records, made a batch at a time in plan order (once); PlanError when a batch
        is not valid or the plan's counts are not the seal's. Then `plan` is the whole plan."""
        text = self._text
        if text is None:
            raise RuntimeError("the records of a sealed plan are read once")
        self._text = None
        maker, check = record_maker(), validators()[1]
        made: list[tuple[RecordPlan, ...]] = []
        for span in self._spans:
            block: list[RecordPlan] = []
            for forms in _parsed(text, span, self.path):
                if not check.is_valid(forms):
                    raise _refused(text, self.path)
                records = maker.made(forms)
                block += records
                yield records
            made.append(tuple(block))
        plan = plan_from_made(self._head_data, made)
        if plan_counts(plan) != self.counts:
            raise PlanError("the plan file's records are not what its seal counts", where=str(self.path), hint=HINT)
        self._plan = plan

    @property
    def plan(self) -> Plan:
        """The whole plan, once `batches` has made every record."""
        if self._plan is None:
            raise RuntimeError("the sealed plan's records are not all made yet")
        return self._plan

    def whole(self) -> Plan:
        """Every record made now: the whole plan."""
        for _ in self.batches():
            pass
        return self.plan


def _parsed(text: bytes | bytearray, span: tuple[int, int] | None, path: Path) -> Iterator[list[Any]]:
    if span is None:
        return
    try:
        yield from record_batches(text, span)
    except orjson.JSONDecodeError:
        raise _refused(text, path) from None


def _refused(text: bytes | bytearray, path: Path) -> PlanError:
    """The PlanError a sealed text some of whose records are not valid gets: the messages of the
    plan read whole (a text so sealed was edited, and sealed again, after it was written)."""
    try:
        with plan_errors(path):
            plan_of_text(text, path)
    except PlanError as error:
        return error
    return PlanError("the plan file's records do not match its schema", where=str(path), hint=HINT)


def open_saved_plan(path: Path, *, limit: int = MAX_PLAN_BYTES) -> Plan | SealedPlan:
    """The plan in `path` (see the module docstring): a SealedPlan, or the Plan read whole."""
    with plan_errors(path):
        text = read_plan_bytes(path, limit)
        sealed = _sealed(text, path)
        return sealed if sealed is not None else plan_of_text(text, path)


def _sealed(text: bytes | bytearray, path: Path) -> SealedPlan | None:
    found = read_seal(text)
    if found is None or not found[0].counts.ordered:
        return None
    seal, at = found
    try:
        head = orjson.loads(head_text(text, seal, at))
    except orjson.JSONDecodeError:
        return None
    blocks = head.get("blocks") if isinstance(head, dict) else None
    if not validators()[0].is_valid(head) or not isinstance(blocks, list) or len(blocks) != len(seal.spans):
        return None
    return SealedPlan(path, text, seal, head)
