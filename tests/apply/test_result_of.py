"""`result_of` makes the very RecordResult its constructor makes, without the constructor."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers.apply import record
from hypothesis import given
from hypothesis import strategies as st

from loader.apply.results import Outcome, RecordResult
from loader.apply.writing import result_of, written_result
from loader.places import CellRef


@pytest.mark.parametrize("values", [
    {},
    {"id": "x-1", "fields": ("code", "name"), "attempts": 2, "adopted": True, "record_status": "ACTIVE",
     "message": "sent, answer lost, adopted"},
    {"id": None, "status": 409, "message": "exists", "attempts": 1},
    {"message": "not applied", "cells": (CellRef("a.csv", None, "B3", 3),), "blocked": True},
])
def test_a_result_made_the_fast_way_equals_the_constructors(values: dict[str, Any]) -> None:
    planned = record("schools", "school", "S1", {"code": "S1"}, row=7)
    made = result_of(planned, Outcome.FAILED, **values)
    built = RecordResult(ref=planned.ref, block=planned.block, entity=planned.entity, key=planned.key,
                         outcome=Outcome.FAILED, source=str(planned.source), row=planned.row, **values)
    assert made == built and repr(made) == repr(built) and hash(made) == hash(built)
    assert replace(made, attempts=9) == replace(built, attempts=9)
    with pytest.raises(AttributeError):
        made.id = "changed"  # type: ignore[misc]


def test_a_field_a_result_does_not_have_is_refused() -> None:
    planned = record("schools", "school", "S1", {"code": "S1"})
    with pytest.raises(TypeError, match="'attempt'"):
        result_of(planned, Outcome.CREATED, attempt=1)


@given(
    outcome=st.sampled_from(Outcome),
    record_id=st.none() | st.text(max_size=8),
    sent=st.lists(st.text(max_size=5), max_size=3).map(tuple),
    attempts=st.integers(0, 9),
    adopted=st.booleans(),
    reached=st.none() | st.sampled_from(("READY", "ACTIVE")),
    message=st.none() | st.just("sent, answer lost, adopted"),
)
def test_a_write_s_result_equals_the_one_result_of_makes(
    outcome: Outcome, record_id: str | None, sent: tuple[str, ...], attempts: int, adopted: bool,
    reached: str | None, message: str | None,
) -> None:
    planned = record("schools", "school", "S1", {"code": "S1"}, row=7)
    made = written_result(planned, outcome, record_id, sent, attempts, adopted, reached, message)
    expected = result_of(planned, outcome, id=record_id, fields=sent, attempts=attempts, adopted=adopted,
                         record_status=reached, message=message)
    assert made == expected and repr(made) == repr(expected) and hash(made) == hash(expected)
    assert made.__dict__ == expected.__dict__
