"""Control characters in the cells a block reads: one warning per column, with a count.

A cell ending in "\\n\\r" or starting with a tab reaches the service as it is unless a value step
cleans it (`transform: [strip]`, `collapse_spaces`); a data officer should know it is there.
Line feeds and tabs inside text are ordinary and not counted; a tab at either end, carriage
returns and the other C0 and C1 control characters are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from loader.findings import Finding
from loader.source.readers import SheetData

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]|^\t|\t$")


def control_character_findings(data: SheetData, columns: Iterable[tuple[str, int]], header_row: int) -> list[Finding]:
    """One warning per (column name, 0-based index) whose text cells below `header_row` hold control
    characters, naming the first such cell and the count."""
    findings = []
    for name, index in dict.fromkeys(columns):
        cells = [row.number for row in data.rows if row.number > header_row and _holds_control(row.values, index)]
        if cells:
            findings.append(Finding(
                "warning", "control-characters",
                f"{len(cells)} cell(s) of column {name!r} hold control characters (a carriage return, a tab "
                "at either end, ...), which reach the service as they are; if they are not wanted, clean "
                "them with `transform: [strip, collapse_spaces]`",
                data.cell(cells[0], index),
            ))
    return findings


def _holds_control(values: tuple[object, ...], index: int) -> bool:
    value = values[index] if index < len(values) else None
    return isinstance(value, str) and _CONTROL.search(value) is not None
