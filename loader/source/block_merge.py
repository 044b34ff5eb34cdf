"""The rows of a block with one key, merged into one record.

Rows with one key and the same values are one record (results.xlsx gives each the record's
outcome); rows differing only in `collect` fields gather their items; rows that differ otherwise
are a duplicate-key error, and the record is left out. No finding shows the value of a field
marked `pii: true` (contract section 7).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from loader.findings import Finding
from loader.places import CellRef, MappingPlace
from loader.record_fields import CUSTOM
from loader.source.block_rows import Built, LeftOut
from loader.source.equality import first_difference
from loader.source.mapping import FieldSpec
from loader.source.readers import SheetData
from loader.source.records import DesiredRecord, display_value, quoted
from loader.source.row_path import gathered_value, key_text

Key = tuple[Any, ...]


class RecordMerger:
    """Takes a block's records in row order; gives the merged records and what merging found."""

    def __init__(self, key: tuple[str, ...], pii: frozenset[str], collect: Mapping[str, FieldSpec],
                 rule: MappingPlace | None = None):
        """`rule`: the mapping line of the key (a key that is not unique is one cause, shown there)."""
        self.key = key
        self.rule = rule
        self.cause = (f"key {', '.join(self.key)} is not unique: rows with one key have different values "
                      "(their records are left out)")
        self.pii = pii
        self.collect = collect
        self.findings: list[Finding] = []
        self.left_out: list[LeftOut] = []
        self._merged: dict[Key, DesiredRecord] = {}
        self._gathered: dict[Key, _Gathered] = {}
        self._rows: dict[Key, list[tuple[str, CellRef]]] = {}  # rows merged into a record
        self._first_items: dict[Key, Mapping[str, list[Any]]] = {}  # a key's first row's collected items
        self._conflicted: set[Key] = set()

    def add(self, record: DesiredRecord, collected: Mapping[str, list[Any]] | None) -> None:
        key = record.key
        if key in self._conflicted:
            conflict = self._conflict(record, self._merged.get(key) or record)
            self.findings.append(conflict)
            self.left_out.append(LeftOut(record.row, key, (conflict,)))
            return
        first = self._merged.get(key)
        if first is None:
            self._merged[key] = record
            if collected:
                self._first_items[key] = collected
        elif first_difference(first.fields, record.fields) is None:
            self._merged_row(first, record)
        elif self.collect and first_difference(_without(first.fields, self.collect),
                                               _without(record.fields, self.collect)) is None:
            if key not in self._gathered:  # made on a key's second row: most keys have one
                self._gathered[key] = _Gathered(first, self._first_items.pop(key, {}))
            self._gathered[key].add(record, collected or {})
            self._merged_row(first, record)
        else:
            conflict = self._conflict(first, record)
            self.findings.append(conflict)
            self._conflicted.add(key)
            self.left_out += [LeftOut(first.row, first.key, (conflict,)), LeftOut(record.row, key, (conflict,))]

    def take(self, outcome: DesiredRecord | Built | Finding, data: SheetData, row: int) -> list[Finding]:
        """What row `row` of `data` gave for one variant, merged: a record (with its errors, which
        are warnings beside a record), or a row its errors kept from being one (left out, so the plan
        blocks its key), or a finding alone. Gives what to say of it: its own findings, then merging's."""
        if isinstance(outcome, Finding):
            return [outcome]
        said: list[Finding] = []
        if isinstance(outcome, DesiredRecord):
            self.add(outcome, None)
        else:
            said += outcome.errors
            if outcome.record is not None:
                self.add(outcome.record, outcome.collected)
            elif outcome.errors:
                self.left_out.append(LeftOut(data.row_ref(row), outcome.key, outcome.errors))
        said += self.findings
        self.findings.clear()
        return said

    def records(self) -> tuple[DesiredRecord, ...]:
        if not (self._gathered or self._rows or self._conflicted):  # every key on one row: the records as built
            return tuple(self._merged.values())
        return tuple(
            _with_rows(self._gathered[k].record(self.collect) if k in self._gathered else r, self._rows.get(k))
            for k, r in self._merged.items()
            if k not in self._conflicted
        )

    def _merged_row(self, first: DesiredRecord, later: DesiredRecord) -> None:
        """Note that `later`'s row merged into `first` (results.xlsx gives every such row the record's outcome)."""
        if later.row != first.row:
            self._rows.setdefault(first.key, []).append((later.block, later.row))

    def _conflict(self, first: DesiredRecord, later: DesiredRecord) -> Finding:
        differing = first_difference(_without(first.fields, self.collect), _without(later.fields, self.collect))
        shown_key = ", ".join(self._quoted(name, v) for name, v in zip(self.key, first.key, strict=True))
        key = key_text(first.key)
        if differing is None:
            return Finding("error", "duplicate-key", f"key ({shown_key}) appears in rows with different values "
                           f"(also at {first.row})", later.row, self.cause, self.rule, key)
        a, b = first.place(differing), later.place(differing)
        return Finding(
            "error", "duplicate-key",
            f"key ({shown_key}) has different values for {differing}: "
            f"{self._quoted(differing, _field(first, differing))} and "
            f"{self._quoted(differing, _field(later, differing))}; "
            f"rows with one key must agree (the record is left out; the other value is at {a})",
            b, self.cause, self.rule, key,
        )

    def _quoted(self, name: str, value: Any) -> str:
        """A value of field `name` for a message; a PII field's value is hidden; an empty one reads `empty`."""
        return quoted(display_value(value), name in self.pii)


def _with_rows(record: DesiredRecord, rows: list[tuple[str, CellRef]] | None) -> DesiredRecord:
    return replace(record, also_rows=tuple(dict.fromkeys(rows))) if rows else record


class _Gathered:
    """The items of a record's `collect` fields over every row (and repeat) with its key, first seen first."""

    def __init__(self, first: DesiredRecord, items: Mapping[str, list[Any]]):
        self.first = first
        # dicts as ordered sets: values are JSON scalars or Refs (hashable), gathered in first-seen order
        self.items: dict[str, dict[Any, None]] = {name: dict.fromkeys(values) for name, values in items.items()}
        self.cells: dict[str, CellRef] = {}

    def add(self, later: DesiredRecord, items: Mapping[str, list[Any]]) -> None:
        for name, values in items.items():
            if name not in self.items:
                self.items[name] = {}
                if name in later.cells:
                    self.cells[name] = later.place(name)
            self.items[name].update(dict.fromkeys(values))

    def record(self, specs: Mapping[str, FieldSpec]) -> DesiredRecord:
        if not self.items:
            return self.first
        fields = dict(self.first.fields)
        custom = dict(fields.get(CUSTOM) or {})
        for name, items in self.items.items():
            value = gathered_value(specs[name], list(items))
            if name.startswith(CUSTOM + "."):
                custom[name[len(CUSTOM) + 1:]] = value
            else:
                fields[name] = value
        if custom:
            fields[CUSTOM] = custom
        cells: Mapping[str, CellRef] = self.first.cells
        if self.cells:  # a field first given on a later row names that row's cell
            cells = {**{name: self.first.place(name) for name in self.first.cells}, **self.cells}
        return replace(self.first, fields=fields, cells=cells)


def _without(fields: Mapping[str, Any], names: Mapping[str, FieldSpec]) -> dict[str, Any]:
    """`fields` without the `collect` fields `names` (custom_attributes.<Label> included)."""
    kept = {k: v for k, v in fields.items() if k not in names}
    custom = kept.get(CUSTOM)
    if custom:
        kept[CUSTOM] = {k: v for k, v in custom.items() if f"{CUSTOM}.{k}" not in names}
    return kept


def _field(record: DesiredRecord, name: str) -> Any:
    if name.startswith(CUSTOM + "."):
        return (record.fields.get(CUSTOM) or {}).get(name[len(CUSTOM) + 1:])
    return record.fields.get(name)
