"""What the loader reads of a live record beyond its fields: when the service last updated it.

The plan remembers it of each record it matches (`RecordPlan.live_updated_time`), the plan's
fetch keeps only it of the metadata, and `apply --plan` compares it again to find stale records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def updated_time(record: Mapping[str, Any]) -> Any:
    """The record's `metadata.updated.time` (epoch milliseconds, as the service gives it), None when
    it has none."""
    metadata = record.get("metadata")
    if type(metadata) is not dict and not isinstance(metadata, Mapping):  # a dict (every live record's) checked first
        return None
    updated = metadata.get("updated")
    if type(updated) is not dict and not isinstance(updated, Mapping):
        return None
    return updated.get("time")
