"""results.xlsx for a source that is not a file (a query, a JSON or XML feed, a table): no sheet
to copy, so the records the plan read are written instead, one row a record at the row it was
read as, under a header of their fields (`custom_attributes.<Label>` for a custom attribute), and
the outcome columns beside them as for a copied sheet.

A record's values are the ones the plan holds: every field for a record it creates, the changed
fields for one it updates, and the key for every record (a record it leaves unchanged shows its
key). A reference shows the id it was written with, or the record of the plan it named. Such a block
is told by its records' places: they name records, not rows (`CellRef.record`); each has a sheet
of its own, named after it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from openpyxl.styles import Font
from openpyxl.worksheet.worksheet import Worksheet

from loader.plan.model import BlockPlan, RecordPlan
from loader.record_fields import CUSTOM
from loader.safe_cells import set_safe_cell


def names_records(blocks: Sequence[BlockPlan]) -> bool:
    """Whether these blocks read a source that is not a file (their records are placed by key)."""
    records = [record for block in blocks for record in block.records]
    return bool(records) and all(record.source.record is not None for record in records)


def write_records(sheet: Worksheet, blocks: Sequence[BlockPlan], header: int) -> int:
    """Write the blocks' records on `sheet` (row `header` their fields'); the number of columns.
    One block a sheet: the row numbers of two blocks' records are of two reads."""
    rows: dict[int, dict[str, Any]] = {}
    columns: dict[str, None] = {}
    for block in blocks:
        for record in block.records:
            if record.row is None:
                continue
            values = _values(record, block.key_fields)
            columns.update(dict.fromkeys(values))
            rows.setdefault(record.row, {}).update(values)
    names = list(columns)
    for column, name in enumerate(names, start=1):
        set_safe_cell(sheet, header, column, name).font = Font(bold=True)
    for row, values in rows.items():
        for column, name in enumerate(names, start=1):
            if values.get(name) is not None:
                set_safe_cell(sheet, row, column, _cell(values[name]))
    return len(names)


def _values(record: RecordPlan, key_fields: Sequence[str]) -> dict[str, Any]:
    values: dict[str, Any] = dict(zip(key_fields, record.key, strict=False))
    for name, value in record.payload.items():
        if name == CUSTOM and isinstance(value, Mapping):
            values.update({f"{CUSTOM}.{label}": text for label, text in value.items()})
        else:
            values[name] = value
    return values


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping) and set(value) == {"id"}:
        return _cell(value["id"])
    if hasattr(value, "ref"):  # the id of a record this plan creates, not known when it was made
        return str(value.ref)
    if isinstance(value, list | tuple):
        return ", ".join(str(_cell(item)) for item in value)
    return json.dumps(value, default=str, ensure_ascii=False) if isinstance(value, Mapping) else str(value)
