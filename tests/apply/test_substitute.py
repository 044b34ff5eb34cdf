"""`substitute`: a payload as plain JSON, each pending id replaced by the id its record got."""

from __future__ import annotations

from collections import OrderedDict
from types import MappingProxyType

import pytest

from loader.apply.payloads import UnresolvedPending, substitute
from loader.plan.model import PendingId


def test_pending_ids_are_replaced_wherever_they_are_and_tuples_become_lists() -> None:
    payload = {
        "code": "S1", "credits": 7.5, "open": False, "note": None, "rank": 3,
        "parent": {"id": PendingId("schools/S0")},
        "tags": ("a", PendingId("tags/T1"), [PendingId("tags/T2")]),
        "custom_attributes": OrderedDict(Campus="North"),
        "frozen": MappingProxyType({"id": PendingId("schools/S0")}),
    }
    ids = {"schools/S0": "id-0", "tags/T1": "id-1", "tags/T2": "id-2"}
    made = substitute(payload, ids)
    assert made == {
        "code": "S1", "credits": 7.5, "open": False, "note": None, "rank": 3,
        "parent": {"id": "id-0"}, "tags": ["a", "id-1", ["id-2"]],
        "custom_attributes": {"Campus": "North"}, "frozen": {"id": "id-0"},
    }
    assert type(made["custom_attributes"]) is dict and type(made["frozen"]) is dict
    assert made is not payload and made["parent"] is not payload["parent"]


def test_a_pending_id_without_an_id_names_its_record() -> None:
    with pytest.raises(UnresolvedPending) as raised:
        substitute({"parent": {"id": PendingId("schools/S9")}}, {})
    assert raised.value.ref == "schools/S9"
