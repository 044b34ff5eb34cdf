"""One block over one sheet: header lookup, `where`, value steps, keys, schema checks, merging.

No finding shows the value of a field marked `pii: true` (contract section 7).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any, cast

from loader.findings import Finding
from loader.places import CellRef, MappingPlace
from loader.profile import Profile
from loader.source.block_rows import Built, CellLayout, FieldReader, RowCells, VariantReader
from loader.source.column_builder import BlockContext, build_columns, can_build_columns
from loader.source.control_chars import control_character_findings
from loader.source.entity_schemas import check_fields, fields_checker, value_checks
from loader.source.equality import first_difference
from loader.source.headers import SCAN_ROWS, Header, find_header_row
from loader.source.mapping import CUSTOM, Block, Condition, FieldSpec
from loader.source.patterns import PatternTimeout, search
from loader.source.readers import WHITESPACE, CellValue, SheetData, SheetRow, is_blank
from loader.source.records import DesiredRecord, Ref, display_value, quoted
from loader.source.steps import EMPTY, StepError, compile_steps, gives_text, text_of
from loader.suggestions import did_you_mean


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


def _wanted_columns(block: Block) -> list[tuple[str, MappingPlace]]:
    """Every column a block names, with the place in the mapping that names it, in mapping order."""
    wanted: list[tuple[str, MappingPlace]] = []
    for variant in block.variants:
        wanted += [(c.column, c.place) for c in variant.where]
        for s in variant.fields:
            wanted += [(column, s.column_place or s.place) for column in s.columns]
            wanted += [(c.column, c.place) for c in s.when]
    return wanted


def _repeat_note(variant: VariantReader) -> str:
    return f" ({variant.repeat})" if variant.repeat else ""


def _holds_hint(row: int | None) -> str:
    if row is None:
        return ""
    return f"; row {row} holds every column this block names: set `header_row: {row}` (or `header_row: auto`)"


def _cell_text(value: CellValue) -> str:
    return "" if value is None else text_of(value).strip(WHITESPACE)


class BlockReader:
    def __init__(self, block: Block, profile: Profile, data: SheetData, *, by_columns: bool = True):
        """`by_columns=False` builds every row the general way (`_build`) and merges the rows by the
        general loop, without the shortcuts; the records are the same (tests/source/test_column_builder.py)."""
        self.block = block
        self.by_columns = by_columns
        self.profile = profile
        self.entity = profile.entity(block.entity)
        self.data = data
        self.wanted = _wanted_columns(block)
        header_row = self._header_row([name for name, _ in self.wanted])
        self.header = Header.of(header_row) if header_row else None
        self.header_row = header_row.number if header_row else block.header_row
        self.columns: Mapping[str, int] = self.header.columns if self.header else {}
        self.key_set = frozenset(block.key)
        self.pii = frozenset(s.name for s in block.fields if s.pii)
        self.collect = {s.name: s for s in block.fields if s.collect}
        self._name_sets: dict[tuple[str, ...], tuple[str, ...]] = {}
        self.layout = self._layout(block.fields)
        checks = value_checks(self.entity)
        self.valid = fields_checker(self.entity, checks)
        self.context = BlockContext(block.name, block.entity, block.key, self.pii, checks,
                                    self._shared,
                                    self._not_taken if self.entity.fields_by_type else None)

    def _layout(self, fields: tuple[FieldSpec, ...]) -> CellLayout:
        return CellLayout(self.data.file, self.data.sheet, {
            s.name: self.columns[s.columns[0]] for s in fields if not s.has_value and s.columns[0] in self.columns
        })

    def _read_columns(self) -> list[tuple[str, int]]:
        return [(name, self.columns[name]) for name, _ in self.wanted if name in self.columns]

    def _header_row(self, wanted: list[str]) -> SheetRow | None:
        rows = self.data.rows
        if not self.block.header_auto:
            return next((r for r in rows if r.number == self.block.header_row), None)
        scores = [(len(wanted) - len(Header.of(row).lacks(wanted)), -i, row) for i, row in enumerate(rows[:SCAN_ROWS])]
        best = max(scores, default=None, key=lambda s: s[:2])
        if best is None or best[0] == 0:
            return find_header_row(rows)
        return best[2]  # every column named, or the row holding most of them (the others are reported missing)

    def header_problems(self) -> list[Finding]:
        """A missing header row, columns the mapping names but the sheet lacks (with the row that
        holds them, when one near the top does), and columns it uses whose header occurs twice."""
        where = f"{self.data.file} › {self.data.sheet}" if self.data.sheet else self.data.file
        block_place = self.block.header_place or self.block.place
        names = [name for name, _ in self.wanted]
        elsewhere = None if self.block.header_auto else self._row_holding(names)
        if self.header is None:
            if self.block.header_auto:
                return [Finding("error", "header-missing", f"no header row in the first {SCAN_ROWS} rows of {where}; "
                                "set `header_row:` to the row holding the column names", block_place)]
            return [Finding("error", "header-missing", f"header row {self.block.header_row} of {where} is empty"
                            + _holds_hint(elsewhere), block_place)]
        missing = self.header.lacks(names)
        if missing and elsewhere is not None:
            shown = ", ".join(repr(c) for c in missing[:5])
            shown += f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            return [Finding("error", "header-elsewhere",
                            f"header row {self.header_row} of {where} lacks {len(missing)} of the columns this block "
                            f"names ({shown}){_holds_hint(elsewhere)}", block_place)]
        problems: list[Finding] = []
        present = self.header.names()
        how = ", found by `header_row: auto`" if self.block.header_auto else ""
        reported: set[str] = set()
        for column, place in self.wanted:
            if column in self.header.columns or column in reported:
                continue
            reported.add(column)
            problems.append(Finding(
                "error", "column-missing",
                f"no column {column!r} in {where} (header row {self.header_row}{how}); "
                f"the columns are: {', '.join(repr(c) for c in present)}{did_you_mean(column, present)}",
                place,
            ))
        for column, place in self.wanted:
            at = self.header.repeated.get(column)
            if at is None or column in reported:
                continue
            reported.add(column)
            cells = [str(self.data.cell(self.header_row, i)) for i in at]
            picks = " or ".join(f"{column}#{k}" for k in range(1, len(at) + 1))
            problems.append(Finding(
                "error", "column-repeated",
                f"the header {column!r} occurs {len(at)} times: {' and '.join(cells)}; name the one to read as "
                f"{picks} (in the order of the columns), or rename one of them in the sheet",
                place,
            ))
        return problems

    def _row_holding(self, names: list[str]) -> int | None:
        """The number of another row near the top holding every column named, if the header row does not."""
        if self.header is not None and not self.header.lacks(names):
            return None
        for row in self.data.rows[:SCAN_ROWS]:
            if row.number != self.block.header_row and not Header.of(row).lacks(names):
                return row.number
        return None

    def read(self, with_sheet_warnings: bool = True) -> BlockResult:
        findings: list[Finding] = []
        if with_sheet_warnings:
            findings += [Finding("warning", code, message, cell) for cell, code, message in self.data.warnings]
            findings += control_character_findings(self.data, self._read_columns(), self.header_row)
        variants = [
            VariantReader(
                variant.repeat,
                tuple(self._condition(c) for c in variant.where),
                tuple(self._field_reader(spec) for spec in variant.fields),
                self._layout(variant.fields) if self.block.repeats else self.layout,
            )
            for variant in self.block.variants
        ]
        merged: dict[tuple[Any, ...], DesiredRecord] = {}
        gathered: dict[tuple[Any, ...], _Gathered] = {}
        merged_rows: dict[tuple[Any, ...], list[tuple[str, CellRef]]] = {}  # rows merged into a record
        first_items: dict[tuple[Any, ...], Mapping[str, list[Any]]] = {}  # a key's first row's collected items
        conflicted: set[tuple[Any, ...]] = set()
        left_out: list[LeftOut] = []
        collect = frozenset(self.collect)
        rows_read = rows_filtered = 0
        body = [row for row in self.data.rows if row.number > self.header_row]
        outcomes = [self._outcomes(body, variant) for variant in variants]
        records = _distinct_records(outcomes) if self.by_columns else None
        if records is not None:  # what the loop below gives when every row is a record of its own key
            return BlockResult(records, tuple(findings), len(body), 0)
        for index in range(len(body)):
            rows_read += 1
            used = False
            for of_variant in outcomes:
                outcome = of_variant[index]
                if outcome is None:
                    continue
                used = True
                if isinstance(outcome, Finding):
                    findings.append(outcome)
                    continue
                if isinstance(outcome, DesiredRecord):
                    record, collected = outcome, None
                elif outcome.record is None:
                    findings.extend(outcome.errors)
                    if outcome.errors:
                        left_out.append(LeftOut(self.data.row_ref(body[index].number), outcome.key, outcome.errors))
                    continue
                else:
                    findings.extend(outcome.errors)
                    record, collected = outcome.record, outcome.collected
                if record.key in conflicted:
                    conflict = self._conflict(record, merged.get(record.key) or record)
                    findings.append(conflict)
                    left_out.append(LeftOut(record.row, record.key, (conflict,)))
                    continue
                first = merged.get(record.key)
                if first is None:
                    merged[record.key] = record
                    if collected:
                        first_items[record.key] = collected
                elif first_difference(first.fields, record.fields) is None:
                    _merged_row(merged_rows, first, record)
                elif collect and first_difference(_without(first.fields, collect),
                                                  _without(record.fields, collect)) is None:
                    if record.key not in gathered:  # made on a key's second row: most keys have one
                        gathered[record.key] = _Gathered(first, first_items.pop(record.key, {}))
                    gathered[record.key].add(record, collected or {})
                    _merged_row(merged_rows, first, record)
                else:
                    conflict = self._conflict(first, record)
                    findings.append(conflict)
                    conflicted.add(record.key)
                    left_out += [LeftOut(first.row, first.key, (conflict,)),
                                 LeftOut(record.row, record.key, (conflict,))]
            if not used:
                rows_filtered += 1
        if gathered or merged_rows or conflicted:
            records = tuple(
                _with_rows(gathered[k].record(self.collect) if k in gathered else r, merged_rows.get(k))
                for k, r in merged.items()
                if k not in conflicted
            )
        else:  # every key on one row: the records as built
            records = tuple(merged.values())
        return BlockResult(records, tuple(findings), rows_read, rows_filtered, tuple(left_out))

    def _outcomes(self, body: list[SheetRow], variant: VariantReader) -> list[DesiredRecord | Built | Finding | None]:
        """What each row of the body gives for one variant: None where its `where` leaves the row out,
        a Finding where `where` ran out of time; rows that need no finding are built a column at a time."""
        outcomes: list[DesiredRecord | Built | Finding | None] = [None] * len(body)
        taken: list[int] = [] if variant.accepts else list(range(len(body)))
        for index, row in enumerate(body if variant.accepts else ()):
            try:
                if not all(accept(row) for accept in variant.accepts):
                    continue
            except PatternTimeout as exc:
                outcomes[index] = Finding("error", "bad-value", f"where{_repeat_note(variant)}: {exc}",
                                          self.data.row_ref(row.number))
                continue
            taken.append(index)
        rows = [body[index] for index in taken] if variant.accepts else body
        fast = self.by_columns and can_build_columns(variant)
        built = build_columns(rows, variant, self.context) if fast else [None] * len(rows)
        if not variant.accepts and type(None) not in set(map(type, built)):
            every: list[DesiredRecord | Built | Finding | None] = [*built]
            return every  # every row taken and built by columns: the loop below would copy them
        for index, row, outcome in zip(taken, rows, built, strict=True):
            outcomes[index] = self._build(row, variant) if outcome is None else outcome
        return outcomes

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
            "matches": lambda row: pattern is not None and search(pattern, text(row)),
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

    def _field_reader(self, spec: FieldSpec) -> FieldReader:
        return FieldReader(
            spec, self._extractor(spec), self._source_column(spec), tuple(self._condition(c) for c in spec.when),
            compile_steps(spec.steps, pii=spec.pii), spec.name in self.key_set,
            spec.steps.split is not None or spec.steps.type == "list",
            spec.name[len(CUSTOM) + 1:] if spec.name.startswith(CUSTOM + ".") else None,
            gives_text(spec.steps),
        )

    def _source_column(self, spec: FieldSpec) -> int | None:
        """The column a field's cell is in: its column, or a template's first column; None for constants."""
        if spec.has_value:
            return None
        return self.columns[spec.columns[0]]

    def _build(self, row: SheetRow, variant: VariantReader) -> Built:
        fields: dict[str, Any] = {}
        custom: dict[str, Any] = {}
        with_cells: list[str] = []
        errors: list[Finding] = []
        collected: dict[str, list[Any]] | None = None
        shown = f" ({variant.repeat})" if variant.repeat else ""
        for field_reader in variant.fields:
            spec, column = field_reader.spec, field_reader.column
            when = field_reader.when
            try:
                raw = field_reader.extract(row) if not when or all(test(row) for test in when) else None
            except PatternTimeout as exc:
                errors.append(Finding("error", "bad-value", f"{spec.name}{shown}: when: {exc}",
                                      self._where(row, column)))
                continue
            try:
                value = field_reader.convert(raw)
            except StepError as exc:
                errors.append(Finding("error", "bad-value", f"{spec.name}{shown}: {exc}", self._where(row, column)))
                continue
            if value is EMPTY:
                if not field_reader.is_key and spec.empty == "skip":
                    continue
                if not field_reader.is_key and spec.empty == "error":
                    errors.append(Finding("error", "empty-value", f"{spec.name}{shown}: a value is required here "
                                          "(the mapping says `empty: error`)", self._where(row, column)))
                    continue
                value = field_reader.empty()
                if field_reader.is_key:
                    errors.append(Finding("error", "empty-key", f"key field {spec.name!r} is empty{shown}",
                                          self._where(row, column)))
                    continue
            elif spec.ref is not None and value is not None:
                value = self._ref(spec, value, None if column is None else self.data.cell(row.number, column))
            elif field_reader.is_key and (value is None or value == []):
                errors.append(Finding("error", "empty-key", f"key field {spec.name!r} is empty{shown}",
                                      self._where(row, column)))
                continue
            if spec.collect:
                items = list(dict.fromkeys(value)) if isinstance(value, list | tuple) else [value]
                (collected := collected if collected is not None else {})[spec.name] = items
                value = _gathered_value(spec, items)
            if field_reader.label is not None:
                custom[field_reader.label] = value
            else:
                fields[spec.name] = value
            if column is not None:
                with_cells.append(spec.name)
        if custom:
            fields[CUSTOM] = custom
        row_ref = self.data.row_ref(row.number)
        if variant.repeat:
            row_ref = replace(row_ref, repeat=variant.repeat)
        cells = RowCells(variant.layout, row.number, self._shared(tuple(with_cells)))
        if not errors and not self.valid(fields):
            for problem in check_fields(self.entity, _without_cleared_labels(fields), self.pii):
                place = cells.get(problem.field) or row_ref
                label = (problem.field or "record") + shown
                errors.append(Finding("error", "schema", f"{label}: {problem.message}", place))
        if errors:
            key_parts = tuple(fields.get(k) for k in self.block.key)
            known = all(k in fields for k in self.block.key)
            return Built(None, tuple(errors), key=key_parts if known else None)
        key = tuple(fields[k] for k in self.block.key)
        warnings = self._not_taken(fields, cells, row_ref, shown) if self.entity.fields_by_type else ()
        return Built(DesiredRecord(self.block.name, self.block.entity, key, fields, row_ref, cells, self.pii),
                      warnings, collected)

    def _not_taken(self, fields: Mapping[str, Any], cells: RowCells, row_ref: CellRef,
                   shown: str) -> tuple[Finding, ...]:
        """Warnings for fields this record's type does not take (the profile's `fields_by_type`)."""
        rule = self.entity.fields_by_type
        assert rule is not None
        kind = fields.get(rule.field)
        takes = rule.types.get(kind) if isinstance(kind, str) else None
        if takes is None:
            return ()
        return tuple(
            Finding("warning", "field-not-taken",
                    f"{name}{shown}: a {self.entity.name} of {rule.field} {kind} does not take {name} (it takes "
                    f"{', '.join(sorted(takes)) or 'none of them'}); the value is sent as read — leave it out for "
                    f"such rows with `when: {{column: ..., not_equals: ...}}`",
                    cells.get(name) or row_ref)
            for name in fields
            if name in rule.specific and name not in takes and fields[name] not in (None, "", [], ())
        )

    def _where(self, row: SheetRow, column: int | None) -> CellRef:
        return self.data.cell(row.number, column) if column is not None else self.data.row_ref(row.number)

    def _shared(self, names: tuple[str, ...]) -> tuple[str, ...]:
        # Rows mostly manage the same fields: one tuple object serves them all.
        return self._name_sets.setdefault(names, names)

    def _ref(self, spec: FieldSpec, value: Any, cell: CellRef | None) -> Ref | tuple[Ref, ...]:
        """The Refs of a reference field. Only a `collect` field's Refs name their cell: the record
        names every other field's cell (`DesiredRecord.place`), and a collected item may come from
        another row."""
        assert spec.ref is not None
        cell = cell if spec.collect else None
        if isinstance(value, list):
            return tuple(Ref(spec.ref, (text_of(v),), spec.by, cell) for v in value)
        return Ref(spec.ref, (text_of(value),), spec.by, cell)

    def _conflict(self, first: DesiredRecord, later: DesiredRecord) -> Finding:
        collect = frozenset(self.collect)
        a_fields, b_fields = _without(first.fields, collect), _without(later.fields, collect)
        differing = first_difference(a_fields, b_fields)
        shown_key = ", ".join(self._quoted(name, v) for name, v in zip(self.block.key, first.key, strict=True))
        if differing is None:
            return Finding("error", "duplicate-key", f"key ({shown_key}) appears in rows with different values "
                           f"(also at {first.row})", later.row)
        a, b = first.place(differing), later.place(differing)
        return Finding(
            "error", "duplicate-key",
            f"key ({shown_key}) has different values for {differing}: "
            f"{self._quoted(differing, _field(first, differing))} and "
            f"{self._quoted(differing, _field(later, differing))}; "
            f"rows with one key must agree (the record is left out; the other value is at {a})",
            b,
        )

    def _quoted(self, name: str, value: Any) -> str:
        """A value of field `name` for a message; a PII field's value is hidden."""
        return quoted(value, True) if name in self.pii else _shown(value)


def _distinct_records(outcomes: list[list[DesiredRecord | Built | Finding | None]]) -> tuple[DesiredRecord, ...] | None:
    """The records of a block read without `repeat` whose every row gave a record (no finding, no
    warning) of a key no other row has; None for any other block. One dict of the keys tells, where
    the merging loop of `read` took 1.5 µs a row (the benchmark's 100,000 rows: 0.15 s)."""
    if len(outcomes) != 1 or not outcomes[0]:
        return None
    built = outcomes[0]
    if set(map(type, built)) != {DesiredRecord}:
        return None
    records = cast(list[DesiredRecord], built)
    if len(dict.fromkeys(map(_KEY, records))) != len(records):
        return None
    return tuple(records)


_KEY = attrgetter("key")


def _merged_row(rows: dict[tuple[Any, ...], list[tuple[str, CellRef]]], first: DesiredRecord,
                later: DesiredRecord) -> None:
    """Note that `later`'s row merged into `first` (results.xlsx gives every such row the record's outcome)."""
    if later.row != first.row:
        rows.setdefault(first.key, []).append((later.block, later.row))


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
            value = _gathered_value(specs[name], list(items))
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


def _gathered_value(spec: FieldSpec, items: list[Any]) -> Any:
    kept = [v for v in items if v is not None]
    if spec.collect == "join":
        return spec.separator.join(text_of(display_value(v)) for v in kept)
    return tuple(kept) if spec.ref else kept


def _without(fields: Mapping[str, Any], names: frozenset[str]) -> dict[str, Any]:
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


def _shown(value: Any) -> str:
    return repr(display_value(value))


def _without_cleared_labels(fields: dict[str, Any]) -> dict[str, Any]:
    custom = fields.get(CUSTOM)
    if not custom or all(v is not None for v in custom.values()):
        return fields
    return {**fields, CUSTOM: {k: v for k, v in custom.items() if v is not None}}
