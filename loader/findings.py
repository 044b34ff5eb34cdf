"""Findings: the warnings and errors reported to a user, each at its place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from loader.places import Place


@dataclass(frozen=True)
class Finding:
    """A warning or an error, tied to its place (a cell, a row, a mapping position or a file).

    The place stays a value until it is shown (`str(place)`), so reports and the results workbook
    can use its parts; it is never parsed back from text.
    """

    severity: Literal["error", "warning"]
    code: str  # stable machine name, e.g. "near-duplicate-key", "read-only-field"
    message: str
    where: Place | None = None
