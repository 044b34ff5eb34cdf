"""One block over one sheet: header lookup, `where`, value steps, keys, schema checks, merging.

No finding shows the value of a field marked `pii: true` (contract section 7).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from loader.findings import Finding
from loader.places import CellRef
from loader.profile import Profile
from loader.source.entity_schemas import check_fields
from loader.source.mapping import CUSTOM, Block, Condition, FieldSpec, did_you_mean
from loader.source.readers import WHITESPACE, CellValue, SheetData, SheetRow, column_letter, is_blank
from loader.source.records import DesiredRecord, Ref, display_value, quoted
from loader.source.steps import EMPTY, StepError, apply_steps, text_of


@dataclass(frozen=True)
class CellLayout:
    """Where each field of a block reads from: the same for every row."""

    file: str
    sheet: str | None
    columns: Mapping[str, int]  # field (or custom_attributes.<Label>) -> 0-based column


class RowCells(Mapping[str, CellRef]):
    """`DesiredRecord.cells` of one row, made on demand.

    Holding a CellRef per field per row cost about 3 KB a row (measured: 200,000 rows x 12
    fields); this holds a row number and a shared tuple of field names.
    """

    __slots__ = ("_layout", "_names", "_row")

    def __init__(self, layout: CellLayout, row: int, names: tuple[str, ...]):
        self._layout = layout
        self._row = row
        self._names = names

    def __getitem__(self, name: str) -> CellRef:
        if name not in self._names:
            raise KeyError(name)
        column = self._layout.columns[name]
        return CellRef(self._layout.file, self._layout.sheet, f"{column_letter(column)}{self._row}", self._row)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"RowCells({ {name: str(self[name]) for name in self._names} })"


@dataclass(frozen=True)
class LeftOut:
    """A row that errors kept from becoming a record: its key where the key cells were readable.

    The planner reports a live record with this key as blocked, not as "not in source".
    """

    row: CellRef
    key: tuple[Any, ...] | None
    errors: tuple[Finding, ...]


@dataclass(frozen=True)
class BlockResult:
    records: tuple[DesiredRecord, ...]
    findings: tuple[Finding, ...]
    rows_read: int
    rows_filtered: int
    left_out: tuple[LeftOut, ...] = ()


@dataclass(frozen=True)
class _Built:
    record: DesiredRecord | None
    errors: tuple[Finding, ...]
    key: tuple[Any, ...] | None = None  # of a row with errors, when its key fields were built


def _cell_text(value: CellValue) -> str:
    return "" if value is None else text_of(value).strip(WHITESPACE)


class BlockReader:
    def __init__(self, block: Block, profile: Profile, data: SheetData):
        self.block = block
        self.profile = profile
        self.entity = profile.entity(block.entity)
        self.data = data
        header = next((r for r in data.rows if r.number == block.header_row), None)
        self.header_found = header is not None
        self.columns: dict[str, int] = {}
        for index, value in enumerate(header.values if header else ()):
            name = _cell_text(value)
            if name and name not in self.columns:
                self.columns[name] = index
        self.key_set = frozenset(block.key)
        self.pii = frozenset(s.name for s in block.fields if s.pii)
        self._name_sets: dict[tuple[str, ...], tuple[str, ...]] = {}
        self.layout = CellLayout(data.file, data.sheet, {
            s.name: self.columns[s.columns[0]] for s in block.fields if not s.has_value and s.columns[0] in self.columns
        })

    def header_problems(self) -> list[Finding]:
        """A missing header row or columns the mapping names but the sheet lacks."""
        where = f"{self.data.file} › {self.data.sheet}" if self.data.sheet else self.data.file
        if not self.header_found:
            return [Finding("error", "header-missing", f"header row {self.block.header_row} of {where} is empty",
                            str(self.block.place))]
        problems: list[Finding] = []
        present = list(self.columns)
        wanted = [(c.column, c.place) for c in self.block.where]
        wanted += [(column, s.column_place or s.place) for s in self.block.fields for column in s.columns]
        for column, place in wanted:
            if column not in self.columns:
                problems.append(Finding(
                    "error", "column-missing",
                    f"no column {column!r} in {where} (header row {self.block.header_row}); "
                    f"the columns are: {', '.join(repr(c) for c in present)}{did_you_mean(column, present)}",
                    str(place),
                ))
        return problems

    def read(self, with_sheet_warnings: bool = True) -> BlockResult:
        findings: list[Finding] = []
        if with_sheet_warnings:
            findings += [Finding("warning", code, message, str(cell)) for cell, code, message in self.data.warnings]
        accepts = [self._condition(c) for c in self.block.where]
        builders = [(spec, self._extractor(spec), self._source_column(spec)) for spec in self.block.fields]
        merged: dict[tuple[Any, ...], DesiredRecord] = {}
        conflicted: set[tuple[Any, ...]] = set()
        rows_read = rows_filtered = 0
        left_out: list[LeftOut] = []
        for row in self.data.rows:
            if row.number <= self.block.header_row:
                continue
            rows_read += 1
            if not all(accept(row) for accept in accepts):
                rows_filtered += 1
                continue
            built = self._build(row, builders)
            findings.extend(built.errors)
            record = built.record
            if record is None:
                left_out.append(LeftOut(self.data.row_ref(row.number), built.key, built.errors))
                continue
            if record.key in conflicted:
                conflict = self._conflict(record, merged.get(record.key) or record)
                findings.append(conflict)
                left_out.append(LeftOut(record.row, record.key, (conflict,)))
                continue
            first = merged.get(record.key)
            if first is None:
                merged[record.key] = record
            elif first.fields != record.fields:
                conflict = self._conflict(first, record)
                findings.append(conflict)
                conflicted.add(record.key)
                left_out += [LeftOut(first.row, first.key, (conflict,)), LeftOut(record.row, record.key, (conflict,))]
        records = tuple(r for k, r in merged.items() if k not in conflicted)
        return BlockResult(records, tuple(findings), rows_read, rows_filtered, tuple(left_out))

    # ---- per-row work ------------------------------------------------------------------

    def _condition(self, condition: Condition) -> Callable[[SheetRow], bool]:
        index = self.columns[condition.column]
        op, values, pattern = condition.op, set(condition.values), condition.pattern
        # A boolean cell reads "TRUE"/"FALSE" (as Excel shows it); `equals: true` means the same.
        values |= {v.upper() for v in values if v.lower() in ("true", "false")}

        def text(row: SheetRow) -> str:
            return _cell_text(row.values[index]) if index < len(row.values) else ""

        tests: dict[str, Callable[[SheetRow], bool]] = {
            "equals": lambda row: text(row) in values,
            "in": lambda row: text(row) in values,
            "not_equals": lambda row: text(row) not in values,
            "not_in": lambda row: text(row) not in values,
            "empty": lambda row: text(row) == "",
            "not_empty": lambda row: text(row) != "",
            "matches": lambda row: pattern is not None and pattern.search(text(row)) is not None,
        }
        return tests[op]

    def _extractor(self, spec: FieldSpec) -> Callable[[SheetRow], Any]:
        if spec.has_value:
            return lambda row: spec.value
        if spec.column is not None:
            index = self.columns[spec.column]
            return lambda row: row.values[index] if index < len(row.values) else None
        parts = [(text, self.columns[text] if is_column else -1) for text, is_column in spec.template]

        def render(row: SheetRow) -> Any:
            values = [row.values[i] if 0 <= i < len(row.values) else None for _, i in parts]
            if all(is_blank(v) for (_, i), v in zip(parts, values, strict=True) if i >= 0):
                return None
            return "".join(t if i < 0 else ("" if is_blank(v) else text_of(v))
                           for (t, i), v in zip(parts, values, strict=True))

        return render

    def _source_column(self, spec: FieldSpec) -> int | None:
        """The column a field's cell is in: its column, or a template's first column; None for constants."""
        if spec.has_value:
            return None
        return self.columns[spec.columns[0]]

    def _build(self, row: SheetRow, builders: list[tuple[FieldSpec, Callable[..., Any], int | None]]) -> _Built:
        fields: dict[str, Any] = {}
        custom: dict[str, Any] = {}
        with_cells: list[str] = []
        errors: list[Finding] = []
        data = self.data
        row_ref = data.row_ref(row.number)
        for spec, extract, column in builders:
            raw = extract(row)
            try:
                value = apply_steps(raw, spec.steps, pii=spec.pii)
            except StepError as exc:
                errors.append(Finding("error", "bad-value", f"{spec.name}: {exc}", self._where(row, column)))
                continue
            if value is EMPTY:
                if spec.name not in self.key_set and spec.empty == "skip":
                    continue
                if spec.name not in self.key_set and spec.empty == "error":
                    errors.append(Finding("error", "empty-value", f"{spec.name}: a value is required here "
                                          "(the mapping says `empty: error`)", self._where(row, column)))
                    continue
                value = [] if (spec.steps.split is not None or spec.steps.type == "list") else None
            elif spec.ref is not None and value is not None:
                value = self._ref(spec, value, None if column is None else data.cell(row.number, column))
            if spec.name in self.key_set and (value is None or value == []):
                errors.append(Finding("error", "empty-key", f"key field {spec.name!r} is empty",
                                      self._where(row, column)))
                continue
            if spec.name.startswith(CUSTOM + "."):
                custom[spec.name[len(CUSTOM) + 1:]] = value
            else:
                fields[spec.name] = value
            if column is not None:
                with_cells.append(spec.name)
        if custom:
            fields[CUSTOM] = custom
        cells = RowCells(self.layout, row.number, self._shared(tuple(with_cells)))
        if not errors:
            for problem in check_fields(self.entity, _without_cleared_labels(fields), self.pii):
                place = cells.get(problem.field) or row_ref
                label = problem.field or "record"
                errors.append(Finding("error", "schema", f"{label}: {problem.message}", str(place)))
        if errors:
            key_parts = tuple(fields.get(k) for k in self.block.key)
            known = all(k in fields for k in self.block.key)
            return _Built(None, tuple(errors), key_parts if known else None)
        key = tuple(fields[k] for k in self.block.key)
        return _Built(DesiredRecord(self.block.name, self.block.entity, key, fields, row_ref, cells, self.pii), ())

    def _where(self, row: SheetRow, column: int | None) -> str:
        return str(self.data.cell(row.number, column) if column is not None else self.data.row_ref(row.number))

    def _shared(self, names: tuple[str, ...]) -> tuple[str, ...]:
        # Rows mostly manage the same fields: one tuple object serves them all.
        return self._name_sets.setdefault(names, names)

    def _ref(self, spec: FieldSpec, value: Any, cell: CellRef | None) -> Ref | tuple[Ref, ...]:
        assert spec.ref is not None
        if isinstance(value, list):
            return tuple(Ref(spec.ref, (text_of(v),), spec.by, cell) for v in value)
        return Ref(spec.ref, (text_of(value),), spec.by, cell)

    def _conflict(self, first: DesiredRecord, later: DesiredRecord) -> Finding:
        names = sorted(set(first.fields) | set(later.fields))
        differing = next((n for n in names if first.fields.get(n) != later.fields.get(n)), None)
        shown_key = ", ".join(self._quoted(name, v) for name, v in zip(self.block.key, first.key, strict=True))
        if differing is None:
            return Finding("error", "duplicate-key", f"key ({shown_key}) appears in rows with different values",
                           f"{first.row} and {later.row}")
        a, b = first.place(differing), later.place(differing)
        if differing == CUSTOM:
            labels = sorted(set(first.fields.get(CUSTOM) or {}) | set(later.fields.get(CUSTOM) or {}))
            label = next(lb for lb in labels
                         if (first.fields.get(CUSTOM) or {}).get(lb) != (later.fields.get(CUSTOM) or {}).get(lb))
            differing = f"{CUSTOM}.{label}"
            a, b = first.place(differing), later.place(differing)
        return Finding(
            "error", "duplicate-key",
            f"key ({shown_key}) has different values for {differing}: "
            f"{self._quoted(differing, _field(first, differing))} and "
            f"{self._quoted(differing, _field(later, differing))}; "
            "rows with one key must agree (the record is left out)",
            f"{a} and {b}",
        )

    def _quoted(self, name: str, value: Any) -> str:
        """A value of field `name` for a message; a PII field's value is hidden."""
        return quoted(value, True) if name in self.pii else _shown(value)


def _field(record: DesiredRecord, name: str) -> Any:
    if name.startswith(CUSTOM + "."):
        return (record.fields.get(CUSTOM) or {}).get(name[len(CUSTOM) + 1:])
    return record.fields.get(name)


def _shown(value: Any) -> str:
    return repr(display_value(value))


def _without_cleared_labels(fields: dict[str, Any]) -> dict[str, Any]:
    custom = fields.get(CUSTOM)
    if not custom or all(v is not None for v in custom.values()):
        return fields
    return {**fields, CUSTOM: {k: v for k, v in custom.items() if v is not None}}
