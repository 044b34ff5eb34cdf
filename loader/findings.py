"""Findings: the warnings and errors reported to a user, each at its place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Finding:
    """A warning or an error, tied to its place (a cell, a row or a mapping line)."""

    severity: Literal["error", "warning"]
    code: str  # stable machine name, e.g. "near-duplicate-key", "read-only-field"
    message: str
    where: str | None = None
