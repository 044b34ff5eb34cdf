"""The plan digest: stable for equal plans (order, floats, dates, machines), different for any changed value."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from helpers.apply import record
from helpers.plan import SAMPLE_SEED, copy_samples, plan_against
from helpers.report import small_plan
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.plan.digest import plan_digest
from loader.plan.model import Action, BlockPlan, FieldChange, NotInSource, Plan
from loader.sandbox.server import SandboxOptions, serve_in_thread

# The digest of `_fixed_plan()`. Pinned so that another machine, Python build or hash seed that
# computed anything else would fail here; change it only with a deliberate change of the canonical form.
FIXED_DIGEST = "sha256:0d88b23bb8c49e0882e3bf42f01a4554286c4caffe0690038fbee5d1022e6c67"


def _fixed_plan(**payload_changes: Any) -> Plan:
    payload = {"code": "A1", "name": "Ada", "score": 97.5, "born": "2001-02-03", "tags": ["x", "y"]}
    payload.update(payload_changes)
    records = (
        record("applicants", "applicant", "A1", payload),
        record("applicants", "applicant", "A2", {"code": "A2", "name": "Bo"}, action=Action.UPDATE, row=3,
               live_id="id-2", changes=(FieldChange("name", "Bob", "Bo", pii=True),)),
    )
    return Plan(environment="sandbox", api_version="1.2", base_url="http://127.0.0.1:1/institution-api",
                fingerprints={"a.xlsx": "sha256:00"}, env_name="local",
                blocks=(BlockPlan("applicants", "applicant", "a.xlsx", "Applicants", records,
                                  not_in_source_records=(NotInSource(("A9",), "id-9"),)),))


def test_the_digest_is_sha256_hex_and_the_same_for_the_same_plan() -> None:
    digest = plan_digest(_fixed_plan())
    assert digest.startswith("sha256:") and len(digest) == len("sha256:") + 64
    assert plan_digest(_fixed_plan()) == digest


def test_the_digest_is_pinned_so_every_machine_computes_the_same_one() -> None:
    assert plan_digest(_fixed_plan()) == FIXED_DIGEST


@pytest.mark.slow
def test_other_hash_seeds_in_other_processes_give_the_same_digest() -> None:
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import test_digest as t; "
        "from loader.plan.digest import plan_digest; print(plan_digest(t._fixed_plan()))"
    )
    here = Path(__file__).parent
    tests = here.parent
    digests = set()
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": os.pathsep.join([str(tests), str(here)])}
        done = subprocess.run([sys.executable, "-c", script, str(here)], env=env, capture_output=True, text=True,
                              timeout=60, check=True)
        digests.add(done.stdout.strip())
    assert digests == {plan_digest(_fixed_plan())}


def test_record_order_key_order_integral_floats_and_date_objects_do_not_change_it() -> None:
    plan = _fixed_plan()
    block = plan.blocks[0]
    reordered = replace(plan, blocks=(replace(block, records=tuple(reversed(block.records))),))
    assert plan_digest(reordered) == plan_digest(plan)
    shuffled = dict(reversed(list(block.records[0].payload.items())))
    same_values = replace(block.records[0], payload=shuffled)
    assert plan_digest(replace(plan, blocks=(replace(block, records=(same_values, block.records[1])),))) == \
        plan_digest(plan)
    assert plan_digest(_fixed_plan(score=2.0)) == plan_digest(_fixed_plan(score=2))
    assert plan_digest(_fixed_plan(born=date(2001, 2, 3))) == plan_digest(_fixed_plan())


def test_the_time_of_planning_and_live_update_times_do_not_change_it() -> None:
    plan = _fixed_plan()
    block = plan.blocks[0]
    touched = replace(block.records[1], live_updated_time=1_700_000_000_000)
    assert plan_digest(replace(plan, created_at="2026-11-22T20:00:00Z")) == plan_digest(plan)
    assert plan_digest(replace(plan, blocks=(replace(block, records=(block.records[0], touched)),))) == \
        plan_digest(plan)


@settings(max_examples=40)
@given(st.sampled_from(["code", "name", "score", "born", "tags"]),
       st.one_of(st.text(max_size=8), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                 st.lists(st.text(max_size=3), max_size=3)))
def test_any_changed_payload_value_changes_it(field: str, value: Any) -> None:
    plan = _fixed_plan()
    changed = _fixed_plan(**{field: value})
    if changed.blocks[0].records[0].payload == plan.blocks[0].records[0].payload:
        return  # hypothesis drew the value already there
    assert plan_digest(changed) != plan_digest(plan)


def test_a_changed_personal_value_changes_it_although_reports_hide_it() -> None:
    plan = _fixed_plan()
    block = plan.blocks[0]
    other_old = replace(block.records[1], changes=(FieldChange("name", "Rob", "Bo", pii=True),))
    assert plan_digest(replace(plan, blocks=(replace(block, records=(block.records[0], other_old)),))) != \
        plan_digest(plan)


def test_the_target_environment_and_findings_change_it() -> None:
    plan = small_plan()
    assert plan_digest(replace(plan, environment="test")) != plan_digest(plan)
    assert plan_digest(replace(plan, findings=())) == plan_digest(plan)  # small_plan has no plan-level ones
    block = plan.blocks[0]
    gone = replace(block, not_in_source_records=(NotInSource(("Z",), "z"),))
    assert plan_digest(replace(plan, blocks=(gone, *plan.blocks[1:]))) != plan_digest(plan)


def _sample_digest(sandbox: Any, root: Path) -> str:
    cwd = Path.cwd()
    os.chdir(root)
    try:
        run = plan_against(sandbox, ["mappings/curriculum.yaml", "mappings/applicants.yaml"])
    finally:
        os.chdir(cwd)
    return plan_digest(run.plan)


def _change_first_email(root: Path) -> None:
    path = root / "samples" / "intake-2027" / "applicants.xlsx"
    book = openpyxl.load_workbook(path)
    sheet = book["Applicants"]
    column = next(c.column for c in sheet[1] if c.value == "Email")
    sheet.cell(row=2, column=column).value = "someone.else@example.com"
    book.save(path)


def test_two_checkouts_planned_against_one_service_agree_and_a_changed_email_changes_the_digest(
    tmp_path: Path,
) -> None:
    one, two, three = (copy_samples(tmp_path / name) for name in ("one", "two", "three"))
    _change_first_email(three)
    seed = json.loads(SAMPLE_SEED.read_text(encoding="utf-8"))
    with serve_in_thread(SandboxOptions(seed=seed)) as sandbox:
        first = _sample_digest(sandbox, one)
        assert _sample_digest(sandbox, two) == first
        assert _sample_digest(sandbox, one) == first
        assert _sample_digest(sandbox, three) != first


def test_every_report_header_prints_the_digest_of_the_unmasked_plan() -> None:
    from loader.report.html import render_html
    from loader.report.markdown import render
    from loader.report.terminal import render_text

    plan = _fixed_plan()
    digest = plan_digest(plan)
    assert f"Plan digest {digest}" in render_text(plan)
    assert f"- Plan digest: `{digest}`" in render(plan)
    assert f"Plan digest <code>{digest}</code>" in render_html(plan)
    assert "Bob" not in render(plan) and "Bob" not in render_html(plan)  # the PII value stays hidden


def test_the_digest_hashed_a_record_at_a_time_is_the_hash_of_the_whole_canonical_text() -> None:
    import hashlib
    import json
    from dataclasses import replace

    from loader.plan import digest as digests

    fixed = _fixed_plan()
    several = replace(fixed, blocks=(*fixed.blocks, replace(fixed.blocks[0], name="more", records=()),
                                     replace(fixed.blocks[0], name="again")))
    for plan in (fixed, several, replace(fixed, blocks=())):
        whole = {**digests._content_head(plan), "blocks": [
            {**digests._block_head(b), "records": [digests._record(r) for r in sorted(b.records, key=lambda r: r.ref)]}
            for b in plan.blocks]}
        text = json.dumps(digests._canonical(whole), sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False, allow_nan=False)
        assert plan_digest(plan) == "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
