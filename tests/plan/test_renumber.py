"""Renumbering (`renamed:`) in the pure planner: each rule of contract section 11, desired records
with their previous keys x live dicts (and a history where the rule needs one) -> Plan."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from helpers.plan import Block

from loader.history.journal import FieldWrite
from loader.history.lines import Owner
from loader.history.store import History
from loader.places import CellRef
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.model import Action, Plan, RecordPlan
from loader.profile import load_profile
from loader.source.records import DesiredRecord, Ref
from loader.source.renames import Rename

PROFILE = load_profile()
HEADER = PlanHeader("sandbox", "5.1.0", "http://127.0.0.1")


@dataclass(frozen=True)
class RenamingBlock(Block):
    renames: tuple[Rename, ...] = ()
    renamed_as: str = "update"


def _record(block: str, entity: str, row: int, **fields: Any) -> DesiredRecord:
    return DesiredRecord(block, entity, (fields["code"],), fields, CellRef("intake.xlsx", block, None, row))


def _schools(*rows: tuple[str, str | None, str]) -> RenamingBlock:
    """A schools block of (code, previous code, name) rows."""
    records = tuple(_record("schools", "school", n + 2, code=code, name=name) for n, (code, _, name) in enumerate(rows))
    renames = tuple(Rename((code,), (old,), CellRef("intake.xlsx", "schools", f"B{n + 2}", n + 2))
                    for n, (code, old, _) in enumerate(rows) if old)
    return RenamingBlock("schools", "school", ("code",), records, sheet="schools", renames=renames)


def _live(rid: str, code: str, name: str = "Science") -> dict[str, Any]:
    return {"id": rid, "code": code, "name": name, "metadata": {"updated": {"time": 1_700_000_000_000}}}


def _plan(blocks: Sequence[Block], live: Mapping[str, Sequence[Mapping[str, Any]]],
          history: History | None = None) -> Plan:
    return plan_changes(blocks, live, PROFILE, header=HEADER, history=history)


def _by_key(plan: Plan) -> dict[str, RecordPlan]:
    return {"/".join(map(str, r.key)): r for r in plan.records()}


def _codes(record: RecordPlan, severity: str) -> list[str]:
    return [f.code for f in record.findings if f.severity == severity]


def test_the_old_key_live_and_the_new_absent_is_a_renumber_of_the_same_live_id() -> None:
    plan = _plan([_schools(("SCIENCE", "SCI", "Science"))], {"school": [_live("s-1", "SCI")]})
    record = _by_key(plan)["SCIENCE"]
    assert (record.action, record.live_id, record.renamed_from) == (Action.UPDATE, "s-1", ("SCI",))
    assert [(c.field, c.old, c.new) for c in record.changes] == [("code", "SCI", "SCIENCE")]
    assert plan.blocks[0].not_in_source_records == ()


def test_the_new_key_live_leaves_nothing_to_renumber() -> None:
    plan = _plan([_schools(("SCIENCE", "SCI", "Science"))], {"school": [_live("s-1", "SCIENCE")]})
    record = _by_key(plan)["SCIENCE"]
    assert (record.action, record.renamed_from, record.findings) == (Action.UNCHANGED, None, ())


def test_both_keys_live_is_an_error_naming_both() -> None:
    plan = _plan([_schools(("SCIENCE", "SCI", "Science"))],
                 {"school": [_live("s-1", "SCI"), _live("s-2", "SCIENCE")]})
    record = _by_key(plan)["SCIENCE"]
    assert _codes(record, "error") == ["renumber-both-live"] and record.blocked
    assert "s-1" in record.findings[0].message and "s-2" in record.findings[0].message


def test_neither_key_live_is_a_create_with_a_warning() -> None:
    record = _by_key(_plan([_schools(("SCIENCE", "SCI", "Science"))], {"school": []}))["SCIENCE"]
    assert record.action is Action.CREATE and _codes(record, "warning") == ["renumber-neither-live"]


def test_a_row_reusing_the_old_key_is_a_create_ordered_after_the_renumber() -> None:
    plan = _plan([_schools(("SCIENCE", "SCI", "Science"), ("SCI", None, "Social Sciences"))],
                 {"school": [_live("s-1", "SCI")]})
    records = _by_key(plan)
    assert records["SCIENCE"].renamed_from == ("SCI",) and records["SCIENCE"].live_id == "s-1"
    assert records["SCI"].action is Action.CREATE and records["SCI"].depends_on == (records["SCIENCE"].ref,)


def test_two_rows_renaming_to_one_key_and_one_key_renamed_twice_are_errors_naming_both() -> None:
    two = RenamingBlock("schools", "school", ("code",), (_record("schools", "school", 2, code="NEW", name="N"),),
                        sheet="schools", renames=(Rename(("NEW",), ("A",), CellRef("intake.xlsx", "schools", "B2", 2)),
                                                  Rename(("NEW",), ("B",), CellRef("intake.xlsx", "schools", "B3", 3))))
    record = _by_key(_plan([two], {"school": [_live("s-1", "A"), _live("s-2", "B")]}))["NEW"]
    assert _codes(record, "error") == ["renumber-ambiguous"] and "B2" in record.findings[0].message
    twice = _plan([_schools(("X1", "OLD", "x"), ("X2", "OLD", "y"))], {"school": [_live("s-1", "OLD")]})
    for key in ("X1", "X2"):
        assert _codes(_by_key(twice)[key], "error") == ["renumber-ambiguous"]


def test_as_successor_moves_nothing_and_both_keys_live_is_no_error() -> None:
    successor = replace(_schools(("SCIENCE", "SCI", "Science")), renamed_as="successor")
    plan = _plan([successor], {"school": [_live("s-1", "SCI")]})
    record = _by_key(plan)["SCIENCE"]
    assert (record.action, record.renamed_from, record.findings) == (Action.CREATE, None, ())
    assert [r.key for r in plan.blocks[0].not_in_source_records] == [("SCI",)]  # retired as on_dropped says
    both = _by_key(_plan([successor], {"school": [_live("s-1", "SCI"), _live("s-2", "SCIENCE")]}))["SCIENCE"]
    assert (both.action, both.findings) == (Action.UNCHANGED, ())


def test_as_successor_two_rows_renaming_to_one_key_are_still_an_error() -> None:
    twice = replace(_schools(("X1", "OLD", "x"), ("X2", "OLD", "y")), renamed_as="successor")
    plan = _plan([twice], {"school": [_live("s-1", "OLD")]})
    for key in ("X1", "X2"):
        assert _codes(_by_key(plan)[key], "error") == ["renumber-ambiguous"]


def test_a_reference_to_a_key_renumbered_in_the_plan_resolves_with_a_warning() -> None:
    courses = Block("courses", "course", ("code",), (
        DesiredRecord("courses", "course", ("C1",), {"code": "C1", "name": "c", "parent": Ref("school", ("SCI",))},
                      CellRef("intake.xlsx", "courses", None, 2)),), sheet="courses")
    plan = _plan([_schools(("SCIENCE", "SCI", "Science")), courses], {"school": [_live("s-1", "SCI")]})
    course = _by_key(plan)["C1"]
    assert course.payload["parent"] == {"id": "s-1"} and _codes(course, "warning") == ["renumbered-reference"]


def _history_with(tmp_path: Path, owner: Owner, *lines: tuple[str, str]) -> History:
    history = History.open(tmp_path)
    writer = history.begin_apply("sandbox", plan_digest=None, by=None)
    for code, live_id in lines:
        writer.record("update", "school", (code,), live_id, [FieldWrite("name", owner, after="Science")])
    history.finish_apply(writer)
    return history


def test_renumbering_a_record_another_block_loaded_is_an_ownership_error(tmp_path: Path) -> None:
    history = _history_with(tmp_path, Owner("other.yaml", "faculties"), ("SCI", "s-1"))
    record = _by_key(_plan([_schools(("SCIENCE", "SCI", "Science"))], {"school": [_live("s-1", "SCI")]},
                           history))["SCIENCE"]
    assert _codes(record, "error") == ["field-owned-elsewhere"] and record.renamed_from is None


def test_a_renumber_the_history_records_is_already_done_even_with_the_old_key_reused(tmp_path: Path) -> None:
    history = History.open(tmp_path)
    writer = history.begin_apply("sandbox", plan_digest=None, by=None)
    owner = Owner("intake.xlsx", "schools")
    writer.record("update", "school", ("SCIENCE",), "s-1", [FieldWrite("code", owner, after="SCIENCE")],
                  formerly=("SCI",))
    history.finish_apply(writer)
    live = {"school": [_live("s-1", "SCIENCE"), _live("s-2", "SCI", "Social Sciences")]}
    plan = _plan([_schools(("SCIENCE", "SCI", "Science"), ("SCI", None, "Social Sciences"))], live, history)
    assert all(not r.findings and r.renamed_from is None for r in plan.records())
