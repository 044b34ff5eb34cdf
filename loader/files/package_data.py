"""Files shipped inside the package: the JSON Schemas under `schemas/` (package `loader.schemas`),
and the packs under `loader/packs/` (tested mappings for public standards, with their samples).

Read through importlib.resources, so they are found in a wheel as in a checkout.
"""

from __future__ import annotations

import json
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any


def read_text(package: str, name: str) -> str:
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


def schema(name: str, package: str = "loader.schemas") -> dict[str, Any]:
    """The JSON Schema `name` (e.g. "plan.schema.json") as a dict."""
    loaded: dict[str, Any] = json.loads(read_text(package, name))
    return loaded


PACKS = "loader.packs"  # one folder a pack, laid out as the project it is copied into


def pack_names() -> list[str]:
    """The names of the packs shipped inside the package (`loader init --pack NAME`)."""
    return sorted(entry.name for entry in resources.files(PACKS).iterdir()
                  if entry.is_dir() and not entry.name.startswith(("_", ".")))


def pack_files(name: str) -> dict[str, bytes]:
    """Every file of the pack `name`, by its path in the project it is copied into (POSIX)."""
    found: dict[str, bytes] = {}
    pending: list[tuple[str, Traversable]] = [("", resources.files(PACKS).joinpath(name))]
    while pending:
        prefix, folder = pending.pop()
        for entry in folder.iterdir():
            if entry.name.startswith((".", "__")):
                continue
            path = f"{prefix}{entry.name}"
            if entry.is_dir():
                pending.append((f"{path}/", entry))
            else:
                found[path] = entry.read_bytes()
    return dict(sorted(found.items()))
