"""plan.json read a batch of records at a time gives the very plan parsing it whole gives; any other
layout, and any plan the schema refuses, is parsed whole (with its problems named)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from helpers.report import review_plan

from loader.errors import PlanError
from loader.plan.model import Plan
from loader.plan.plan_dict import plan_from_dict
from loader.plan.plan_file import plan_json_text, read_plan_json, write_plan_json
from loader.plan.plan_split import record_batches, split_plan


def many(copies: int) -> Plan:
    """review_plan (every kind of record) with each block's records `copies` times over (refs made unique)."""
    plan = review_plan()
    blocks = tuple(replace(b, records=tuple(replace(r, ref=f"{r.ref}#{n}") for n in range(copies) for r in b.records))
                   for b in plan.blocks)
    return replace(plan, blocks=blocks)


def _whole(path: Path):
    """The plan as parsing the whole text gives it (the standard library's parser, no batches)."""
    return plan_from_dict(json.loads(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("make", [review_plan, lambda: many(300)])
def test_read_in_batches_the_plan_is_the_one_parsed_whole(tmp_path: Path, make) -> None:
    path = tmp_path / "plan.json"
    write_plan_json(make(), path)
    text = path.read_bytes()
    split = split_plan(text)
    assert split is not None and split.spans  # the layout `loader plan --out` writes is read in batches
    assert read_plan_json(path) == _whole(path)


def test_batches_of_any_size_join_into_the_records_of_each_block(tmp_path: Path) -> None:
    plan = many(60)
    text = plan_json_text(plan).encode("utf-8")
    split = split_plan(text)
    assert split is not None
    whole = json.loads(text)
    for index, span in split.spans.items():
        for size in (1, 700, 5000, 1 << 20):
            batches = list(record_batches(text, span, size))
            records = whole["blocks"][index]["records"]
            assert [r for batch in batches for r in batch] == records
            assert size > 5000 or len(batches) > 1 or len(records) == 1
    assert [b["records"] for b in split.head["blocks"]] == [[] for _ in whole["blocks"]]


def test_a_plan_laid_out_otherwise_is_parsed_whole_to_the_same_plan(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    write_plan_json(many(50), path)
    expected = _whole(path)
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8"))), encoding="utf-8")
    assert not split_plan(compact.read_bytes()).spans  # type: ignore[union-attr]  # no records apart: all in the head
    assert read_plan_json(compact) == expected
    tabs = tmp_path / "tabs.json"
    tabs.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8")), indent="\t"), encoding="utf-8")
    assert read_plan_json(tabs) == expected


def _broken_late(path: Path, found: str, put: str) -> None:
    """plan.json of 300 records with the last `found` in its text made `put`, and its seal dropped (a
    plan edited with its seal left is refused as edited: tests/plan/test_plan_seal_refused.py)."""
    write_plan_json(many(300), path)
    text = path.read_text(encoding="utf-8")
    at = text.rindex(found)
    text = text[:at] + put + text[at + len(found):]
    path.write_text(text[:text.rindex(',\n  "seal": ')] + "\n}\n", encoding="utf-8")


def test_a_record_broken_deep_in_the_file_is_named_as_parsing_it_whole_names_it(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    _broken_late(path, '"action": "create"', '"action": "delete"')
    with pytest.raises(PlanError, match=r"not a valid plan:\n  blocks/\d+/records/\d+/action: 'delete' is not one of"):
        read_plan_json(path)


def test_a_batch_that_does_not_parse_is_the_parsers_message_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    _broken_late(path, '"row": ', '"row": ,')
    with pytest.raises(PlanError, match=r"cannot be read: Expecting value: line \d+ column \d+"):
        read_plan_json(path)
