"""A record untouched since its history line (its live `metadata.updated` the line's, live W for
every field the line marks) is planned from the line as the full three-way compare plans it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from helpers.worlds import worlds
from hypothesis import event, given, settings
from hypothesis import strategies as st

from loader.history.comparable import comparable
from loader.history.digests import Digester
from loader.history.head import new_head
from loader.history.lines import FieldMark, HistoryLine, Owner, label_field, line_digest
from loader.history.snapshot import Snapshot
from loader.history.store import History
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.history_fields import three_way_record
from loader.plan.history_pass import HistoryCompare
from loader.plan.history_untouched import parsed_marks
from loader.plan.model import Action
from loader.profile import load_profile
from loader.record_fields import CUSTOM

PROFILE = load_profile()
HEADER = PlanHeader("sandbox", findings=())
T = TypeVar("T")
DIGESTER = Digester(frozenset({"applicant", "credential"}), b"k" * 32)


def _given(value: T) -> Callable[[], T]:
    return lambda: value


def _stamped(live: dict[str, list[dict[str, Any]]]) -> None:
    for records in live.values():
        for at, record in enumerate(records):
            record["metadata"] = {"updated": {"time": 1000 + at, "user": "staff"}}


def _marks(draw: Callable[..., Any], entity: str, key: Any, own: Owner, fields: dict[str, Any],
           live: dict[str, Any]) -> dict[str, FieldMark]:
    """A mark for every field the sheet manages, W that of live (as the line of a record untouched
    since it holds), owned by the block mostly, now and then by another."""
    profile = PROFILE.entity(entity)
    digests = DIGESTER.record(entity, key)
    marks = {}
    for name, value in fields.items():
        owner = own if draw(st.integers(0, 4)) else Owner("other.yaml", "other")
        if name == CUSTOM:
            for label in value or {}:
                marks[label_field(label)] = FieldMark(owner, digests.value(label_field(label),
                                                                           (live.get(CUSTOM) or {}).get(label)))
            continue
        live_value = comparable(name, live.get(name), profile)
        marks[name] = FieldMark(owner, digests.written(name, live_value, as_set=name in profile.set_fields))
    return marks


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_record_untouched_since_its_line_is_planned_as_the_full_compare_plans_it(data: st.DataObject) -> None:
    blocks, live = data.draw(worlds())
    _stamped(live)
    plan = plan_changes(blocks, live, PROFILE, header=HEADER)
    by_id = {str(r["id"]): r for records in live.values() for r in records}
    desired = {(r.block, r.row): r for b in blocks for r in b.records}
    checked = updates = 0
    for block in plan.blocks:
        for record in block.records:
            found = desired.get((record.block, record.source))
            match = by_id.get(record.live_id or "")
            if found is None or match is None or record.errors or record.blocked:
                continue
            compare = HistoryCompare(History(Path("history"), new_head(), True, DIGESTER, Snapshot(), None), blocks,
                                     PROFILE)
            context = compare.block(record.block, record.entity, record.source.file)
            marks = _marks(data.draw, record.entity, record.key, context.context.owner, dict(found.fields), match)
            line = HistoryLine(DIGESTER.key_token(record.entity, record.key),
                               DIGESTER.id_token(record.entity, str(match["id"])),
                               match["metadata"]["updated"]["time"], "staff", marks)
            digests, shown = DIGESTER.record(record.entity, record.key), line_digest(line)
            settled = context.untouched.record(record, match, found, parsed_marks(line.fields, context.context.owns),
                                               _given(digests), _given(shown))
            if settled is None:
                assert record.action in (Action.UPDATE, Action.UNCHANGED)
                continue
            full = three_way_record(record, match, found, line, digests, PROFILE.entity(record.entity),
                                    context.context)
            assert settled == full
            checked += 1
            updates += record.action is Action.UPDATE
    event(f"records settled from their line: {min(checked, 3)}")
    event(f"updates settled from their line: {min(updates, 2)}")


def test_an_update_untouched_since_its_line_is_settled_from_it() -> None:
    """The property above meets updates: one of a school renamed, live untouched since its line."""
    from helpers.plan import Block
    from helpers.worlds import desired as desired_record

    wanted = desired_record("schools", "school", 2, ("S1",), {"code": "S1", "name": "New"})
    blocks = [Block("schools", "school", ("code",), (wanted,))]
    live = {"school": [{"id": "s-1", "code": "S1", "name": "Old", "type": "SCHOOL"}]}
    _stamped(live)
    record = plan_changes(blocks, live, PROFILE, header=HEADER).blocks[0].records[0]
    assert record.action is Action.UPDATE
    compare = HistoryCompare(History(Path("history"), new_head(), True, DIGESTER, Snapshot(), None), blocks, PROFILE)
    context = compare.block("schools", "school", "gen.xlsx")
    digests = DIGESTER.record("school", ("S1",))
    school = live["school"][0]
    marks = {name: FieldMark(context.context.owner, digests.value(name, school[name])) for name in ("code", "name")}
    line = HistoryLine(DIGESTER.key_token("school", ("S1",)), DIGESTER.id_token("school", "s-1"), 1000, "staff", marks)
    settled = context.untouched.record(record, school, wanted, parsed_marks(marks, context.context.owns),
                                       lambda: digests, lambda: line_digest(line))
    assert settled is not None and settled.written_after == (("name", digests.value("name", "New")),)
    assert settled == three_way_record(record, school, wanted, line, digests, PROFILE.entity("school"), context.context)
