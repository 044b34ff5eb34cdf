"""The plan digest: stable for equal plans (order, floats, dates, machines), different for any changed value."""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
from dataclasses import replace
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import openpyxl
import orjson
import pytest
from helpers.apply import record
from helpers.plan import SAMPLE_SEED, copy_samples, plan_against
from helpers.report import small_plan
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.findings import Finding
from loader.places import CellRef
from loader.plan.canonical import canonical, encode
from loader.plan.digest import block_digest, plan_digest
from loader.plan.model import Action, BlockedRow, BlockPlan, FieldChange, NotInSource, PendingId, Plan
from loader.sandbox.server import SandboxOptions, serve_in_thread

# The digest of `_fixed_plan()`. Pinned so that another machine, Python build or hash seed that
# computed anything else would fail here; change it only with a deliberate change of the canonical form.
FIXED_DIGEST = "sha256:b92e33ce576f525e28dcaab9813435a2b4eb7cb020f4c01a1d5b29d6d7a8f020"  # formula 3


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
        "print(t._digests_seeded_by_hash())"
    )
    here = Path(__file__).parent
    tests = here.parent
    digests = set()
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": os.pathsep.join([str(tests), str(here)])}
        done = subprocess.run([sys.executable, "-c", script, str(here)], env=env, capture_output=True, text=True,
                              timeout=60, check=True)
        digests.add(done.stdout.strip())
    assert digests == {_digests_seeded_by_hash()}


def _digests_seeded_by_hash() -> str:
    """The fixed plan's digest, and one's with sets (their order follows the hash seed)."""
    return f"{plan_digest(_fixed_plan())} {plan_digest(_fixed_plan(tags=set('abcdefgh'), n={2.5, 'x', 1}))}"


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


def test_a_text_holding_a_lone_surrogate_has_a_digest_of_its_own() -> None:
    # A CSV read with escaped bytes or a service answer's "\\udcff" holds text that is not UTF-8.
    with_surrogate = plan_digest(_fixed_plan(name="Ada\udcff", **{"k\udcff": "v"}))
    assert with_surrogate == plan_digest(_fixed_plan(name="Ada\udcff", **{"k\udcff": "v"}))
    assert with_surrogate != plan_digest(_fixed_plan(name="Ada\udcfe", **{"k\udcff": "v"}))
    assert with_surrogate != plan_digest(_fixed_plan(name="Ada", **{"k\udcff": "v"}))


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
    assert f"--expect-digest {digest}" in render_text(plan)  # the closing line's apply command
    assert f"- Plan digest: `{digest}`" in render(plan)
    assert f"Plan digest <code>{digest}</code>" in render_html(plan)
    assert "Bob" not in render(plan) and "Bob" not in render_html(plan)  # the PII value stays hidden


def test_a_block_digest_is_its_heads_text_and_its_records_hashes_in_ref_order() -> None:
    from loader.plan import digest as digests

    fixed = _fixed_plan()
    block = fixed.blocks[0]
    many = replace(block, records=tuple(
        record("applicants", "applicant", f"A{n}", {"code": f"A{n}", "score": n / 4, "big": 2**70 + n})
        for n in reversed(range(7))))
    for one in (block, many, replace(block, records=())):
        texts = [orjson.dumps(canonical(digests._record(r)), option=orjson.OPT_SORT_KEYS)
                 for r in sorted(one.records, key=lambda r: r.ref)]
        head = orjson.dumps(digests._block_head(one), option=orjson.OPT_SORT_KEYS)
        expected = hashlib.sha256(head + b"".join(hashlib.sha256(t).digest() for t in texts)).hexdigest()
        assert block_digest(one) == expected


def test_the_plan_digest_is_its_head_with_the_block_digests_in_plan_order() -> None:
    from loader.plan import digest as digests

    plan = _two_block_plan()
    digests_of_blocks = [block_digest(b) for b in plan.blocks]
    head = orjson.dumps([digests.FORMULA, canonical(digests._content_head(plan)), digests_of_blocks],
                        option=orjson.OPT_SORT_KEYS)
    assert plan_digest(plan) == "sha256:" + hashlib.sha256(head).hexdigest()
    assert plan_digest(plan, digests_of_blocks) == plan_digest(plan)
    assert plan_digest(plan, tuple(digests_of_blocks)) == plan_digest(plan)
    swapped = replace(plan, blocks=tuple(reversed(plan.blocks)))
    assert plan_digest(swapped) != plan_digest(plan)  # plan order is covered
    with pytest.raises(ValueError):
        plan_digest(plan, digests_of_blocks[:1])
    with pytest.raises(ValueError):
        plan_digest(plan, ["sha256:" + d for d in digests_of_blocks])


def test_blocks_hashed_in_any_order_combine_to_the_same_digest() -> None:
    plan = _two_block_plan()
    found = {b.name: block_digest(b) for b in reversed(plan.blocks)}  # as each block was planned
    assert plan_digest(plan, [found[b.name] for b in plan.blocks]) == plan_digest(plan)


def _two_block_plan() -> Plan:
    fixed = _fixed_plan()
    other = BlockPlan("courses", "course", "c.xlsx", "Courses", (
        record("courses", "course", "C1", {"code": "C1", "parent": {"id": PendingId("applicants/A1")}}),),
        findings=(Finding("warning", "w", "a warning"),))
    return replace(fixed, blocks=(*fixed.blocks, other))


# -- Equal values in other forms give the same digest; any changed covered value changes it. --

_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=False), st.text(max_size=6),
)
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner,
                                                                                    max_size=3)),
    max_leaves=8,
)


def _other_form(value: Any, draw: Any) -> Any:
    """An equal value written another way: ints as floats, floats as Decimals or ints, lists as
    tuples, dicts in another key order."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return float(value) if abs(value) <= 2**53 and draw(st.booleans()) else value
    if isinstance(value, float):
        if value.is_integer() and draw(st.booleans()):
            return int(value)
        return Decimal(value) if math.isfinite(value) and draw(st.booleans()) else value
    if isinstance(value, list):
        items = [_other_form(v, draw) for v in value]
        return tuple(items) if draw(st.booleans()) else items
    return {k: _other_form(v, draw) for k, v in reversed(list(value.items()))}


def _plan_holding(value: Any, where: str, other: Any = "unchanged") -> Plan:
    """_fixed_plan with `value` at one free-form place (`other` at the rest)."""
    def at(place: str) -> Any:
        return value if place == where else other

    plan = _fixed_plan(score=at("payload"))
    block = plan.blocks[0]
    first, second = block.records
    first = replace(first, key=("A1", at("key")))
    second = replace(second, changes=(FieldChange("name", at("old"), at("new"), pii=True),))
    block = replace(block, records=(first, second),
                    not_in_source_records=(NotInSource(("A9", at("not_in_source")), "id-9"),),
                    blocked_rows=(BlockedRow(CellRef("a.xlsx", "Applicants", row=9), 9, ("A8", at("blocked")), None,
                                             ()),))
    return replace(plan, blocks=(block,))


_PLACES = ["payload", "key", "old", "new", "not_in_source", "blocked"]


@settings(max_examples=150, deadline=None)
@given(_VALUES, st.sampled_from(_PLACES), st.data())
def test_equal_values_in_other_forms_give_the_same_digest(value: Any, where: str, data: st.DataObject) -> None:
    same = _other_form(value, data.draw)
    assert plan_digest(_plan_holding(same, where)) == plan_digest(_plan_holding(value, where))


@settings(max_examples=150, deadline=None)
@given(_VALUES, _VALUES, st.sampled_from(_PLACES))
def test_any_changed_free_form_value_changes_it(value: Any, other: Any, where: str) -> None:
    if value == other:
        return  # equal values (1 == 1.0 == True, -0.0 == 0.0) need not differ
    assert plan_digest(_plan_holding(value, where)) != plan_digest(_plan_holding(other, where))


def test_sets_dates_decimals_and_other_types_have_one_form_each() -> None:
    items = ["b", "a", 3, 2.0, None, ("t", 1)]
    assert _held(set(items)) == _held(frozenset(reversed(items)))
    assert _held({2, "a"}) == _held({2.0, "a"})
    assert _held({1, 2}) != _held({1, 3})
    assert _held(Decimal("2.50"), "new") == _held(2.5, "new")
    assert _held(Decimal("NaN"), "new") != _held(None, "new")
    assert _held(float("nan")) == _held(float("nan"))
    assert _held(float("nan")) != _held(None)
    assert _held(float("inf")) != _held(float("-inf"))
    assert _held(datetime(2001, 2, 3, 4, 5), "key") == _held("2001-02-03T04:05:00", "key")
    assert _held(PendingId("a/1")) != _held("a/1")
    assert _held(PendingId("a/1")) != _held({"ref": "a/1"})
    assert _held(Action.UPDATE) == _held("update")
    assert _held(Path("x/y")) != _held(Path("x/z"))


def test_big_integers_and_number_keys_in_plain_looking_records_are_written_canonically() -> None:
    # orjson refuses ints beyond 64 bits and keys that are not text: the batch is written again
    # through the canonical walk, which gives such a record the same text as its other forms.
    assert _held(2**70) == _held(float(2**70))
    assert _held(2**70) != _held(2**70 + 1)
    assert _held(2**70) != _held(str(2**70))
    assert _held(-(2**63) - 1, "key") != _held(-(2**63), "key")
    assert _held({1: "a"}) == _held({"1": "a"})


def _held(value: Any, where: str = "payload") -> str:
    return plan_digest(_plan_holding(value, where))


def _covered_changes() -> list[tuple[str, Any]]:
    """Each covered value of `_fixed_plan`, changed."""
    def record_change(**values: Any) -> Any:
        def change(plan: Plan) -> Plan:
            block = plan.blocks[0]
            return replace(plan, blocks=(replace(block, records=(block.records[0], replace(block.records[1],
                                                                                           **values))),))
        return change

    def block_change(**values: Any) -> Any:
        return lambda plan: replace(plan, blocks=(replace(plan.blocks[0], **values),))

    warning = Finding("warning", "w", "a warning", CellRef("a.xlsx", "Applicants", "B3", 3))
    return [
        ("ref", record_change(ref="applicants/A3")),
        ("entity", record_change(entity="person")),
        ("key", record_change(key=("A3",))),
        ("action", record_change(action=Action.UNCHANGED)),
        ("payload", record_change(payload={"code": "A2", "name": "Bob"})),
        ("source file", record_change(source=CellRef("b.xlsx", "applicants", row=3))),
        ("source cell", record_change(source=CellRef("curriculum.xlsx", "applicants", "C3", 3))),
        ("source repeat", record_change(source=CellRef("curriculum.xlsx", "applicants", row=3, repeat="n=2"))),
        ("row", record_change(row=4)),
        ("live_id", record_change(live_id="id-3")),
        ("change field", record_change(changes=(FieldChange("code", "Bob", "Bo", pii=True),))),
        ("change new", record_change(changes=(FieldChange("name", "Bob", "Bö", pii=True),))),
        ("change pii", record_change(changes=(FieldChange("name", "Bob", "Bo", pii=False),))),
        ("another change", record_change(changes=(FieldChange("name", "Bob", "Bo", pii=True),
                                                  FieldChange("code", None, "A2")))),
        ("status_path", record_change(status_path=("ACTIVE",))),
        ("depends_on", record_change(depends_on=("applicants/A1",))),
        ("refers_to", record_change(refers_to=("applicants/A1",))),
        ("findings", record_change(findings=(warning,))),
        ("blocked", record_change(blocked=True)),
        ("block name", block_change(name="people")),
        ("block entity", block_change(entity="person")),
        ("source_file", block_change(source_file="b.xlsx")),
        ("sheet", block_change(sheet=None)),
        ("key_fields", block_change(key_fields=("code",))),
        ("block findings", block_change(findings=(warning,))),
        ("not in source id", block_change(not_in_source_records=(NotInSource(("A9",), "id-8"),))),
        ("not in source count", block_change(not_in_source_records=())),
        ("blocked rows", block_change(blocked_rows=(BlockedRow(CellRef("a.xlsx", "Applicants", row=9), 9, None,
                                                               None, (warning,)),))),
        ("a record more", block_change(records=(*_fixed_plan().blocks[0].records,
                                                record("applicants", "applicant", "A3", {})))),
        ("environment", lambda plan: replace(plan, environment="test")),
        ("env_name", lambda plan: replace(plan, env_name="prod")),
        ("api_version", lambda plan: replace(plan, api_version="1.3")),
        ("plan findings", lambda plan: replace(plan, findings=(warning,))),
        ("profile fingerprint", lambda plan: replace(plan, profile_fingerprint="sha256:01")),
        ("history state", lambda plan: replace(plan, history_state="lineage/1/-")),
        ("decisions", lambda plan: replace(plan, decisions=(("school", "k", "name", "d", "skip"),))),
        ("revert of", lambda plan: replace(plan, revert_of="20260101T000000Z-ab")),
        ("a block more", lambda plan: replace(plan, blocks=(*plan.blocks, replace(plan.blocks[0], name="more")))),
    ]


@pytest.mark.parametrize(("what", "change"), _covered_changes(), ids=[w for w, _ in _covered_changes()])
def test_changing_any_covered_value_changes_it(what: str, change: Any) -> None:
    plan = _fixed_plan()
    changed = change(plan)
    assert changed != plan
    assert plan_digest(changed) != plan_digest(plan)
    if changed.blocks and plan.blocks and changed.blocks[0] != plan.blocks[0]:
        assert block_digest(changed.blocks[0]) != block_digest(plan.blocks[0])


def test_the_order_of_findings_not_in_source_records_and_dependencies_does_not_change_it() -> None:
    plan = _fixed_plan()
    block = plan.blocks[0]
    one = Finding("warning", "w", "one", CellRef("a.xlsx", "Applicants", "B3", 3))
    two = Finding("error", "e", "two")
    gone = (NotInSource(("A9",), "id-9"), NotInSource(("A7",), "id-7"))
    second = block.records[1]
    forth = replace(block, not_in_source_records=gone, findings=(one, two), records=(
        block.records[0], replace(second, findings=(one, two), depends_on=("x", "y"), refers_to=("p", "q"),
                                  changes=(*second.changes, FieldChange("code", "B", "A2")))))
    back = replace(block, not_in_source_records=gone[::-1], findings=(two, one), records=(
        block.records[0], replace(second, findings=(two, one), depends_on=("y", "x"), refers_to=("q", "p"),
                                  changes=(FieldChange("code", "B", "A2"), *second.changes))))
    assert block_digest(forth) == block_digest(back)
    assert plan_digest(replace(plan, blocks=(forth,), findings=(one, two))) == \
        plan_digest(replace(plan, blocks=(back,), findings=(two, one)))


def test_keys_that_are_not_text_are_written_as_their_canonical_value() -> None:
    assert _held({1: "a"}) == _held({"1": "a"}) == _held({1.0: "a"})
    assert _held({(1, "x"): "a"}) == _held({(1.0, "x"): "a"})
    assert _held({None: "a"}) != _held({"None": "a"})


def test_floats_are_written_as_python_writes_them_not_as_orjson_does() -> None:
    for number, text in ((1.5e-07, b"1.5e-07"), (1e16, b"10000000000000000"), (0.1, b"0.1"), (-2.5, b"-2.5"),
                         (1e300, str(int(1e300)).encode()), (float("inf"), b'{"$float":"inf"}')):
        assert encode(canonical(number)) == text
