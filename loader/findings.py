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

    `cause` is what the finding says without what is particular to its row (the value found): the
    findings of one block with one code, rule and cause are one cause, shown once with their count
    (`loader.report.finding_groups`). `rule` is the mapping line that made them, where one did; `key` the
    key of the record (or row) the finding is about, shown beside its cell.
    """

    severity: Literal["error", "warning"]
    code: str  # stable machine name, e.g. "near-duplicate-key", "read-only-field"
    message: str
    where: Place | None = None
    cause: str = ""  # "" : the message is the cause
    rule: Place | None = None
    key: str = ""
