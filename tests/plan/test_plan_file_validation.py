"""plan.json's check: the loader's validator (jsonschema-rs) and the Python reference implementation
agree on every plan file, and name as many problems: here on a plan with every kind of record, and
on that plan broken at any place in any way.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
from helpers.report import review_plan
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.plan.plan_file import plan_json_text, plan_schema, validation_errors

VALID = json.loads(plan_json_text(review_plan()))
VALUES = [None, "", "x", "create", "sha256:" + "0" * 64, "A1", 0, -1, 3, 1.5, True, [], [None], ["x"], {},
          {"id": "s-1"}, {"$pending": "schools/SCI"}, {"file": "f.xlsx", "sheet": "s", "cell": "B2", "row": 2}]


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*at, index))
    return found


PATHS = _paths(VALID)[1:]


def _python_errors(data: Any) -> list[str]:
    validator = jsonschema.Draft202012Validator(plan_schema())
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(data)]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PATHS), st.sampled_from(["replace", "delete", "add"]), st.sampled_from(VALUES))
def test_both_validators_agree_on_a_plan_broken_anywhere(path: tuple[Any, ...], how: str, value: Any) -> None:
    data = copy.deepcopy(VALID)
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if how == "replace":
        parent[last] = copy.deepcopy(value)
    elif how == "delete":
        del parent[last]
    elif isinstance(parent[last], dict):
        parent[last]["unexpected"] = copy.deepcopy(value)
    elif isinstance(parent[last], list):
        parent[last].append(copy.deepcopy(value))
    python = _python_errors(data)
    listed = validation_errors(data)
    assert (listed == []) == (python == [])
    assert len(listed) == len(python)


def test_a_valid_plan_is_valid_to_both() -> None:
    assert _python_errors(VALID) == []
    assert validation_errors(VALID) == []
