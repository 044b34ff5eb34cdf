"""The newest value the loader left in given fields, read from the journals' text.

A conflict shows the value the loader last loaded into its field (contract section 11); the
snapshot keeps only its digest W, the journals keep the value after each write or confirmation
(format 2 on, fields of entities without personal data). A plan asks for the few fields of its
conflicts: only the lines of those records are parsed (`journal_reading.rows_naming`), and a
journal of format 1, which kept no values, is passed over by its header line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Set
from pathlib import Path
from typing import Any

from loader.history.files import read_lines
from loader.history.journal_reading import UNREADABLE, entry_from, rows_naming

Field = tuple[str, str, str]
"""A field asked for: (entity, key token, field name)."""


def newest_values(journals: Iterable[Path], wanted: Set[Field]) -> dict[Field, Any]:
    """Per field of `wanted`, the value after of its newest journal entry that has one (a field no
    journal kept a value for is absent). `journals`: each journal's first part, oldest first."""
    found: dict[Field, Any] = {}
    keys = {key for _, key, _ in wanted}
    for journal in reversed(list(journals)):
        if _format(journal) < 2:
            continue
        newest: dict[Field, Any] = {}
        for row in rows_naming(journal, keys):
            newest.update(_values(row, wanted))
        for at, value in newest.items():
            found.setdefault(at, value)
        if len(found) == len(wanted):
            break
    return found


def _format(journal: Path) -> int:
    """The journal's format, from its header line alone (0 when it cannot be read)."""
    try:
        return int(json.loads(next(read_lines(journal), b""))["journal"])
    except UNREADABLE:
        return 0


def _values(row: bytes, wanted: Set[Field]) -> dict[Field, Any]:
    """The values after, of fields in `wanted`, of one journal line (none of a line that is not an entry)."""
    try:
        entry = entry_from(json.loads(row))
    except UNREADABLE:
        return {}  # a torn or damaged line: the commands that fold and revert report it
    return {(entry.entity, entry.key, name): field.after for name, field in entry.fields.items()
            if field.has_after and (entry.entity, entry.key, name) in wanted}
