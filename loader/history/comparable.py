"""The form a value is digested in for W, the same in the planner, apply and a baseline: a reference
by its id (the service may answer with more than the id), anything else as it is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loader.profile import EntityProfile


def comparable(name: str, value: Any, entity: EntityProfile) -> Any:
    """`value` of field `name` in the form W digests it."""
    if name not in entity.references:
        return value
    if isinstance(value, Mapping):
        return str(value["id"]) if "id" in value else value
    if isinstance(value, list | tuple) and all(isinstance(v, Mapping) and "id" in v for v in value):
        return [str(v["id"]) for v in value]
    return value
