"""Files shipped inside the package: the JSON Schemas under `schemas/` (package `loader.schemas`).

Read through importlib.resources, so they are found in a wheel as in a checkout.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def read_text(package: str, name: str) -> str:
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


def schema(name: str, package: str = "loader.schemas") -> dict[str, Any]:
    """The JSON Schema `name` (e.g. "plan.schema.json") as a dict."""
    loaded: dict[str, Any] = json.loads(read_text(package, name))
    return loaded
