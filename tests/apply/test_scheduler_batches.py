"""Scheduler: the walk of records added in batches while it runs gives the walk of them all added at once."""

from __future__ import annotations

import pytest
from helpers.apply import record

from loader.apply.graph import Scheduler
from loader.errors import PlanError
from loader.plan.model import RecordPlan


def _records() -> list[RecordPlan]:
    schools = [record("schools", "school", f"S{i}", {}) for i in range(3)]
    courses = [record("courses", "course", f"C{i}", {}, depends_on=(f"schools/S{i % 3}",)) for i in range(6)]
    subjects = [record("subjects", "subject", f"U{i}", {}, depends_on=(f"courses/C{i}", "schools/S0"))
                for i in range(6)]
    return schools + courses + subjects


def _walk(scheduler: Scheduler, fail: set[str]) -> tuple[list[str], set[str]]:
    order: list[str] = []
    withdrawn: set[str] = set()
    while (ref := scheduler.next_ready()) is not None:
        order.append(ref)
        if ref in fail:
            withdrawn |= scheduler.failed(ref)
        else:
            scheduler.succeeded(ref)
    return order, withdrawn


@pytest.mark.parametrize("fail", [set(), {"schools/S1"}, {"courses/C0", "schools/S2"}])
def test_records_added_in_batches_are_walked_as_if_all_were_there(fail: set[str]) -> None:
    records = _records()
    at_once = Scheduler(("school", "course", "subject"))
    assert at_once.add(records) == {}
    whole = _walk(at_once, fail)
    growing = Scheduler(("school", "course", "subject"))
    for start in range(0, len(records), 4):
        assert growing.add(records[start:start + 4]) == {}
    assert _walk(growing, fail) == whole
    assert growing.refs == [r.ref for r in records]


def test_a_record_added_after_its_dependency_failed_is_withdrawn_naming_what_failed() -> None:
    records = _records()
    growing = Scheduler()
    growing.add(records[:3])
    assert growing.next_ready() == "schools/S0"
    growing.failed("schools/S0")
    assert growing.add(records[3:4]) == {"courses/C0": ("schools/S0", True)}
    growing.add(records[4:9])  # C3 too depends on S0; C1, C2, C4, C5 do not
    growing.withdraw(["courses/C1"])  # skipped: its dependants are withdrawn, naming it
    added = growing.add(records[9:])
    assert added["subjects/U1"] == ("schools/S0", True)  # its first dependency that ended: S0's failure
    assert set(added) == {f"subjects/U{i}" for i in range(6)}
    assert "courses/C1" not in growing.pending() and "courses/C2" in growing.pending()


def test_a_record_before_one_it_depends_on_is_refused() -> None:
    late = record("courses", "course", "C0", {}, depends_on=("schools/S0",))
    with pytest.raises(PlanError, match="comes before 'schools/S0'"):
        Scheduler().add([late])
