"""The newest value the loader left in given fields, read from the journals' text.

A conflict shows the value the loader last loaded into its field (contract section 11); the
snapshot keeps only its digest W, the journals keep the value after each write or confirmation
(format 2 on, fields of entities without personal data). A plan asks for the few fields of its
conflicts; reading every journal whole for them would parse every entry of every apply. So each
line is first tested as text: a line holding no value after, or about another record, is passed
over without being parsed; only the lines of the records asked for are read as entries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Set
from pathlib import Path
from typing import Any

from loader.history.files import read_lines
from loader.history.journal_reading import entry_from, first_and_last_line, part_paths

Field = tuple[str, str, str]
"""A field asked for: (entity, key token, field name)."""

_AFTER = b'"after":'
_KEY = b'"key":'
# A JSON string after a "key": name (spaces allowed, as any JSON writer may put them)
_STRING = re.compile(rb'\s*("(?:[^"\\]|\\.)*")')
_BAD = (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError)


def newest_values(journals: Iterable[Path], wanted: Set[Field]) -> dict[Field, Any]:
    """Per field of `wanted`, the value after of its newest journal entry that has one (a field no
    journal kept a value for is absent). `journals`: each journal's first part, oldest first."""
    found: dict[Field, Any] = {}
    keys = {key for _, key, _ in wanted}
    for journal in reversed(list(journals)):
        if _format(journal) < 2:  # format 1 kept no values after
            continue
        newest: dict[Field, Any] = {}
        for part in part_paths(journal):
            for row in read_lines(part):
                if _AFTER in row and _key(row) in keys:
                    newest.update(_values(row, wanted))
        for at, value in newest.items():
            found.setdefault(at, value)
        if len(found) == len(wanted):
            break
    return found


def _format(journal: Path) -> int:
    """The journal's format, from its header line (0 when it cannot be read: then nothing is asked of it)."""
    try:
        header = json.loads(first_and_last_line(journal)[0])
        return int(header["journal"])
    except _BAD:
        return 0


def _key(row: bytes) -> str | None:
    """The record key token of a journal line, read from its text: an entry's own "key" is its last
    (nested values come before it, and a quote inside a string is escaped)."""
    at = row.rfind(_KEY)
    if at < 0:
        return None
    match = _STRING.match(row, at + len(_KEY))
    if match is None:
        return None
    try:
        key = json.loads(match.group(1))
    except ValueError:
        return None
    return key if isinstance(key, str) else None


def _values(row: bytes, wanted: Set[Field]) -> dict[Field, Any]:
    """The values after, of fields in `wanted`, of one journal line (none of a line that is not an entry)."""
    try:
        entry = entry_from(json.loads(row))
    except _BAD:
        return {}  # a torn or damaged line: the commands that fold and revert report it
    return {(entry.entity, entry.key, name): field.after for name, field in entry.fields.items()
            if field.has_after and (entry.entity, entry.key, name) in wanted}
