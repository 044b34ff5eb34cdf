"""plan.json: valid against schemas/plan.schema.json, mode 0600, PII masked in changes only."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest
from helpers.report import Block, desired, review_plan

from loader.errors import PlanError
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.digest import plan_digest
from loader.plan.masking import masked_plan
from loader.plan.model import PendingId, Plan
from loader.plan.plan_counts import plan_counts
from loader.plan.plan_dict import plan_from_dict, plan_to_dict
from loader.plan.plan_file import plan_json_text, read_plan_json, validation_errors, write_plan_json
from loader.plan.plan_split import split_plan
from loader.profile import load_profile
from loader.source.records import Ref


def test_plan_json_is_written_0600_even_over_a_readable_file(plan: Plan, tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    target.write_text("old", encoding="utf-8")
    os.chmod(target, 0o644)
    write_plan_json(plan, target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    write_plan_json(plan, tmp_path / "new.json")
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o600


def test_plan_json_is_written_whole_when_the_system_writes_only_part_at_a_time(
    plan: Plan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data[:100])))
    write_plan_json(plan, tmp_path / "plan.json")
    monkeypatch.undo()
    assert (tmp_path / "plan.json").read_text(encoding="utf-8") == plan_json_text(plan)
    assert stat.S_IMODE((tmp_path / "plan.json").stat().st_mode) == 0o600


def test_plan_json_is_valid_and_reads_back_as_the_masked_plan(plan: Plan, tmp_path: Path) -> None:
    write_plan_json(plan, tmp_path / "plan.json")
    data = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    assert validation_errors(data) == []
    again = plan_from_dict(json.loads(plan_json_text(masked_plan(plan))))
    assert replace(read_plan_json(tmp_path / "plan.json"), digest=None) == replace(again, digest=None)
    read = read_plan_json(tmp_path / "plan.json")
    assert read.digest == plan_digest(plan)  # recorded before masking
    assert replace(read, digest=None) == masked_plan(plan)


def test_pii_is_masked_in_changes_but_the_payload_keeps_what_apply_must_send(plan: Plan) -> None:
    data = json.loads(plan_json_text(plan))
    applicant = next(r for b in data["blocks"] for r in b["records"] if r["ref"] == "applicants/A1")
    assert applicant["changes"] == [{"field": "email_address", "old": "‹hidden›", "new": "‹hidden›", "pii": True}]
    assert applicant["payload"] == {"email_address": "new.secret@example.com"}


def test_pending_ids_round_trip_through_plan_json(tmp_path: Path) -> None:
    blocks = [Block("schools", "school", ("code",), (desired("schools", "school", 2, code="NEW", name="N"),)),
              Block("courses", "course", ("code",), (desired("courses", "course", 2, code="C", name="C",
                                                             parent=Ref("school", ("NEW",))),))]
    made = plan_changes(blocks, {}, load_profile(), header=PlanHeader("sandbox"))
    write_plan_json(made, tmp_path / "plan.json")
    assert '"$pending": "schools/NEW"' in (tmp_path / "plan.json").read_text(encoding="utf-8")
    course = read_plan_json(tmp_path / "plan.json").records()[1]
    assert course.payload["parent"] == {"id": PendingId("schools/NEW")}


def test_a_broken_plan_file_is_refused_naming_every_problem(plan: Plan, tmp_path: Path) -> None:
    data = json.loads(plan_json_text(plan))
    data["blocks"][0]["records"][0]["action"] = "delete"
    del data["environment"]
    (tmp_path / "plan.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(PlanError) as caught:
        read_plan_json(tmp_path / "plan.json")
    assert "'environment' is a required property" in str(caught.value)
    assert "blocks/0/records/0/action" in str(caught.value)


def test_plan_json_lists_not_in_source_records_by_key_and_id_and_blocked_rows(tmp_path: Path) -> None:
    plan = review_plan()
    write_plan_json(plan, tmp_path / "plan.json")
    data = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    assert validation_errors(data) == []
    schools = data["blocks"][0]
    assert schools["not_in_source"] == 1 and schools["not_in_source_records"] == [{"key": ["GONE"], "id": "s-4"}]
    assert schools["blocked_rows"] == [{
        "source": {"file": "intake.xlsx", "sheet": "schools", "row": 9}, "row": 9, "key": ["OLD"], "live_id": "s-3",
        "errors": [{"severity": "error", "code": "bad-value", "message": "name: too long",
                    "where": {"file": "intake.xlsx", "sheet": "schools", "cell": "B9", "row": 9}}],
    }]
    blocked = [(r["ref"], r["blocked"]) for b in data["blocks"] for r in b["records"] if r["blocked"]]
    assert blocked == [("courses/BADC", True), ("programs/P1", True)]
    read = read_plan_json(tmp_path / "plan.json")
    assert read.digest == plan_digest(plan)  # recorded before masking
    assert replace(read, digest=None) == masked_plan(plan)
    schools["not_in_source_records"] = [{"key": ["GONE"]}]
    assert any("not_in_source_records/0" in p and "'id'" in p for p in validation_errors(data))


def test_a_plan_json_of_an_earlier_version_without_the_lists_still_reads(plan: Plan) -> None:
    data = json.loads(plan_json_text(plan))
    for block in data["blocks"]:
        del block["not_in_source_records"], block["blocked_rows"]
    assert validation_errors(data) == []
    assert plan_from_dict(data).blocks[0].not_in_source_records == ()


def _whole_text(plan: Plan) -> str:
    """plan.json as it was made before it was written a record at a time: the whole data, then the
    text; its seal last: the SHA-256 of the text before it, the schema's, where `split_plan` finds
    each block's records, the plan's counts."""
    data = plan_to_dict(masked_plan(plan))
    data["digest"] = plan_digest(plan)
    unsealed = json.dumps(data, indent=2, ensure_ascii=False)
    split = split_plan(unsealed.encode("utf-8"))
    assert split is not None
    schema_text = (Path(__file__).parents[2] / "schemas" / "plan.schema.json").read_bytes()
    counts = plan_counts(plan)
    data["seal"] = {
        "sha256": hashlib.sha256(unsealed[:-2].encode("utf-8")).hexdigest(),
        "schema": "sha256:" + hashlib.sha256(schema_text).hexdigest(),
        "spans": [list(split.spans[i]) if i in split.spans else None for i in range(len(plan.blocks))],
        "counts": {"block_records": [len(b.records) for b in plan.blocks], "record_errors": counts.record_errors,
                   "changes": counts.changes, "changes_partial": counts.changes_partial, "scope": counts.scope,
                   "personal": list(counts.personal), "ordered": counts.ordered},
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def test_plan_json_written_a_record_at_a_time_is_the_text_of_the_whole_plan(plan: Plan, tmp_path: Path) -> None:
    no_records = replace(plan, blocks=(replace(plan.blocks[0], records=()), *plan.blocks[1:]))
    for one in (plan, no_records, replace(plan, blocks=())):
        assert plan_json_text(one) == _whole_text(one)
        write_plan_json(one, tmp_path / "plan.json")
        assert (tmp_path / "plan.json").read_text(encoding="utf-8") == _whole_text(one)
