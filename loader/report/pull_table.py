"""Live records -> flat sheet rows a user can start a mapping from (`loader pull`).

Pure: no I/O. Nested values become columns a mapping can name:
`parent.id`, one column per custom attribute label (`custom_attributes.Faculty`),
lists joined with "; " (split them back with `split: ";"`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

LIST_SEPARATOR = "; "
_LEADING = ("id", "code", "external_id", "name", "type", "status", "parent.id")


@dataclass(frozen=True)
class SheetTable:
    name: str
    header: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]


def _flatten(record: Mapping[str, Any], omit: frozenset[str]) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in record.items():
        if name in omit:
            continue
        if isinstance(value, Mapping):
            for sub, inner in value.items():
                if isinstance(inner, Mapping | list):
                    continue  # deeper structure has no place in a flat sheet
                flat[f"{name}.{sub}"] = inner
        elif isinstance(value, list):
            flat[name] = LIST_SEPARATOR.join(_scalar_text(v) for v in value)
        else:
            flat[name] = value
    return flat


def _scalar_text(value: Any) -> str:
    if isinstance(value, Mapping) and "id" in value:
        return str(value["id"])
    return str(value)


def _column_order(columns: Iterable[str]) -> tuple[str, ...]:
    present = set(columns)
    leading = [c for c in _LEADING if c in present]
    rest = sorted(
        present - set(leading),
        key=lambda c: (c.startswith("custom_attributes."), c),
    )
    return (*leading, *rest)


def records_to_table(
    name: str, records: Sequence[Mapping[str, Any]], *, omit: Iterable[str] = ("children", "metadata")
) -> SheetTable:
    """One sheet of `records`, columns in a stable order (identifying fields first)."""
    omitted = frozenset(omit)
    flat = [_flatten(r, omitted) for r in records]
    header = _column_order({c for row in flat for c in row})
    rows = tuple(tuple(row.get(c) for c in header) for row in flat)
    return SheetTable(name=name, header=header, rows=rows)
