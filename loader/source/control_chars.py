"""Control characters in the values a block sends: one warning per column, with a count.

A cell ending in "\\n\\r" or starting with a tab reaches the service as it is unless a value step
cleans it (`transform: [strip]`, `collapse_spaces`); a data officer should know it is there.
Line feeds and tabs inside text are ordinary and not counted; a tab at either end, carriage
returns and the other C0 and C1 control characters are.

The check runs on each block's records, after the field's steps: every block reading a column
warns of it (not only the first block to read the sheet), and a column whose own steps remove
the characters is not named.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from loader.findings import Finding
from loader.source.mapping import Block
from loader.source.records import DesiredRecord
from loader.words import plural

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]|^\t|\t$")
_CUSTOM = "custom_attributes."


def control_character_findings(block: Block, records: Sequence[DesiredRecord]) -> list[Finding]:
    """One warning per column read by a field whose value (after its steps) holds control
    characters in some records, naming the first such record's cell and the count."""
    findings = []
    columns = {spec.name: spec.column for spec in block.fields if spec.column is not None}
    for column, names in _fields_by_column(columns).items():
        held = [(record, name) for record in records for name in names if _holds_control(_value(record, name))]
        if held:
            record, name = held[0]
            findings.append(Finding(
                "warning", "control-characters",
                f"{plural(len(held), 'value')} of column {column!r} {'holds' if len(held) == 1 else 'hold'} "
                "control characters (a carriage return, a tab "
                "at either end, ...) after the field's steps, and reach the service as they are; if they are "
                "not wanted, clean them with `transform: [strip, collapse_spaces]`",
                record.place(name),
            ))
    return findings


def _fields_by_column(columns: Mapping[str, str]) -> dict[str, list[str]]:
    by_column: dict[str, list[str]] = {}
    for name, column in columns.items():
        by_column.setdefault(column, []).append(name)
    return by_column


def _value(record: DesiredRecord, name: str) -> Any:
    if name.startswith(_CUSTOM):
        custom = record.fields.get("custom_attributes")
        return custom.get(name[len(_CUSTOM):]) if isinstance(custom, Mapping) else None
    return record.fields.get(name)


def _holds_control(value: Any) -> bool:
    if isinstance(value, str):
        return _CONTROL.search(value) is not None
    return isinstance(value, (list, tuple)) and any(_holds_control(v) for v in _texts(value))


def _texts(values: Iterable[Any]) -> Iterable[str]:
    return (v for v in values if isinstance(v, str))
