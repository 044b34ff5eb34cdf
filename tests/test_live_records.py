"""What the loader reads of a live record's metadata: its update time, wherever it is read."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from loader.live_records import updated_time


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"id": "s-1", "metadata": {"updated": {"time": 1_700_000_000_000, "user": "u"}}}, 1_700_000_000_000),
        ({"id": "s-1", "metadata": MappingProxyType({"updated": MappingProxyType({"time": 5})})}, 5),
        ({"id": "s-1"}, None),
        ({"id": "s-1", "metadata": None}, None),
        ({"id": "s-1", "metadata": "2026-01-01"}, None),
        ({"id": "s-1", "metadata": {"created": {"time": 1}}}, None),
        ({"id": "s-1", "metadata": {"updated": None}}, None),
        ({"id": "s-1", "metadata": {"updated": 7}}, None),
        ({"id": "s-1", "metadata": {"updated": {}}}, None),
    ],
)
def test_the_update_time_is_metadata_updated_time_or_none(record: dict[str, Any], expected: Any) -> None:
    assert updated_time(record) == expected
