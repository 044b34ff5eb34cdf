"""Records of a source that is not a sheet, named by their key in every place (contract 4.2).

A query's, a JSON or XML feed's or a table's row number may change from one read to the next, so
its places name the record by its key and the column (or path) read: `handbook (query) › MATH1001
› credit_points`, `feed (xml) › PG064 › dc:title`. The name is the text of the block's key fields
as the record holds it (a template's text, or its column's), before any value step; a record
whose key reads empty, and every record of a block whose key is personal (`pii: true`: it would
show in every message), is named by its place among the records read, `record 3`.
"""

from __future__ import annotations

from dataclasses import replace

from loader.source.cell_values import text_of
from loader.source.mapping import Block, FieldSpec
from loader.source.readers import SheetData, SheetRow, kind_for
from loader.source.readers.rows import CellValue

KEY_SEPARATOR = "/"


def with_record_names(block: Block, data: SheetData, columns: dict[str, int] | None, header_row: int) -> SheetData:
    """`data` naming each record below `header_row` by the block's key (`SheetData.records`), for a
    source whose kind names records; `data` itself for a sheet. `columns`: the header's names."""
    if kind_for(block.source).places != "record" or columns is None:
        return data
    header = next((row.values for row in data.rows if row.number == header_row), ())
    names = tuple("" if value is None else str(value) for value in header)
    keys = [spec for spec in block.fields if spec.name in block.key]
    if not keys or any(spec.pii for spec in keys):
        return replace(data, records={}, names=names)
    records = {row.number: _key_text(keys, row, columns) for row in data.rows if row.number > header_row}
    return replace(data, records=records, names=names)


def _key_text(keys: list[FieldSpec], row: SheetRow, columns: dict[str, int]) -> str:
    parts = [_field_text(spec, row, columns) for spec in keys]
    return KEY_SEPARATOR.join(parts) if all(parts) else ""


def _field_text(spec: FieldSpec, row: SheetRow, columns: dict[str, int]) -> str:
    if spec.has_value:
        return "" if spec.value is None else str(spec.value)
    if spec.template:
        return "".join(_cell(row, columns.get(part)) if is_column else part for part, is_column in spec.template)
    return _cell(row, columns.get(spec.column or ""))


def _cell(row: SheetRow, index: int | None) -> str:
    value: CellValue = row.values[index] if index is not None and index < len(row.values) else None
    return "" if value is None else text_of(value).strip()
