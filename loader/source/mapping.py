"""Mapping files (contract section 4) as frozen values: Mapping / Block / Variant / FieldSpec.

Every node keeps its MappingPlace, so every problem names `file:line:col`. `mapping_file` reads
a file into these; `mapping_builder` builds each block. Columns are checked later, against the
sheet's header (`block_header`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loader.findings import Finding
from loader.places import MappingPlace
from loader.source.check_rules import Check
from loader.source.drift_rules import DriftRules
from loader.source.patterns import Pattern
from loader.source.readers import Source
from loader.source.steps import Steps


@dataclass(frozen=True)
class Condition:
    """One `where` test on a column: op is equals, not_equals, in, not_in, empty, not_empty, matches."""

    column: str
    op: str
    values: tuple[str, ...]
    place: MappingPlace
    pattern: Pattern | None = field(default=None, compare=False)


@dataclass(frozen=True)
class LookupSpec:
    """`lookup:` a two-column table (`key` -> `value` columns) in a sheet of `source` (None: the block's source)."""

    source: Source | None
    sheet: str | None
    key: str
    value: str
    place: MappingPlace


PATHS_SEPARATOR = " | "  # joins a field's list of paths into the name of the column they give


@dataclass(frozen=True)
class FieldSpec:
    """Where one field's value comes from and how it is cleaned.

    `name` is the payload field, or `custom_attributes.<Label>`. Exactly one of `column`,
    `template` (its columns in `template_columns`) or a constant (`has_value`) is set.
    """

    name: str
    place: MappingPlace
    steps: Steps
    column: str | None = None
    column_place: MappingPlace | None = None
    template: tuple[tuple[str, bool], ...] = ()  # (literal text or column name, is_column)
    has_value: bool = False
    value: Any = None
    ref: str | None = None
    by: tuple[str, ...] = ()
    empty: str = "skip"
    pii: bool = False
    when: tuple[Condition, ...] = ()  # the field takes its value only on rows where these hold
    collect: str | None = None  # "list" or "join": rows sharing a key all contribute
    separator: str = ", "  # for collect: join
    lookup: LookupSpec | None = None  # its table is read with the sheets (`loader.source.lookups`)
    on_platform_edit: str = "keep"  # keep | sheet | platform: what wins when the platform changed it
    # `column: [path, ...]` of a JSON or XML source: the paths tried in turn (the first finding a value
    # gives it); `column` is then their names joined by " | ", as the reader names that column
    paths: tuple[str, ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        if self.column is not None:
            return (self.column,)
        return tuple(part for part, is_column in self.template if is_column)


@dataclass(frozen=True)
class Variant:
    """A block's fields and `where` for one value of its `repeat` (the only one without `repeat`)."""

    repeat: str | None  # "n=2", named in messages; None without `repeat`
    fields: tuple[FieldSpec, ...]
    where: tuple[Condition, ...]


@dataclass(frozen=True)
class Crosswalk:
    """`renamed: {source:, from:, to:}`: a table of another file (or sheet) pairing each previous
    key value (the `old` column) with the value that replaced it (the `new` column)."""

    source: Source
    sheet: str | None
    old: str
    new: str
    place: MappingPlace


@dataclass(frozen=True)
class RenameRule:
    """A block's `renamed:`: where a row's previous key value is (of the key field the profile lists
    as renamable): a `column` of the same source, or a `crosswalk` table of another; and how the
    record moves to its new key (`as: update`: the key field is updated on the same live record)."""

    column: str | None
    key_field: str  # the key field renamed
    place: MappingPlace
    how: str = "update"
    crosswalk: Crosswalk | None = None


@dataclass(frozen=True)
class OnDropped:
    """A block's `on_dropped:` other than `keep`: the values set on records it loaded and its source
    no longer names (`set:`; a custom attribute as `custom_attributes.<label>`), as pairs; or
    `release`: the block stops managing them."""

    values: tuple[tuple[str, Any], ...]
    place: MappingPlace
    release: bool = False


@dataclass(frozen=True)
class Block:
    name: str
    entity: str
    source: Source  # what its rows are read from (`loader.source.readers`: every question goes to its kind)
    source_display: str  # the source described for people (a file's path; never a credential)
    sheet: str | None
    header_row: int
    key: tuple[str, ...]
    fields: tuple[FieldSpec, ...]
    where: tuple[Condition, ...]
    place: MappingPlace
    source_place: MappingPlace
    sheet_place: MappingPlace | None = None
    header_auto: bool = False  # `header_row: auto`: the first row near the top holding every column named
    header_place: MappingPlace | None = None
    repeats: tuple[Variant, ...] = ()  # one per `repeat` value; empty without `repeat`
    take_over: bool = False  # may change fields another block owns (section 10, ownership)
    formerly: tuple[str, str] | None = None  # (file, block) it was named before a rename: keeps its records
    duplicates: DuplicateRule | None = None  # creates resembling a live person are held (section 11)
    renamed: RenameRule | None = None  # where a row's previous key is (a renumbered code)
    on_dropped: OnDropped | None = None  # None: keep (records dropped from the source are listed only)
    checks: tuple[Check, ...] = ()  # `checks:` on the records it builds (loader.source.checks)
    drift: DriftRules = field(default_factory=DriftRules)  # `drift:` and its repeat patterns (loader.source.drift)

    @property
    def variants(self) -> tuple[Variant, ...]:
        """What each row is read as: one Variant per `repeat` value, or the block's fields and `where`."""
        return self.repeats or (Variant(None, self.fields, self.where),)

    def history_rules(self) -> BlockHistoryRules:
        """What the three-way plan needs of the block (`loader.plan.history_pass`)."""
        policies = {spec.name: spec.on_platform_edit for v in self.variants for spec in v.fields
                    if spec.on_platform_edit != "keep"}
        return BlockHistoryRules(tuple(sorted(policies.items())), self.take_over, self.formerly)


@dataclass(frozen=True)
class DuplicateRule:
    """A block's `duplicates:`: the fields a new row is matched on against live people (names, date of
    birth, e-mail) and how similar names must be (0-1) to count (`loader.plan.duplicates`)."""

    match: tuple[str, ...]
    threshold: float = 0.9


@dataclass(frozen=True)
class BlockHistoryRules:
    """A block's rules for the history: each field's `on_platform_edit` other than keep,
    `take_over` and `formerly` (file, block)."""

    policies: tuple[tuple[str, str], ...] = ()
    take_over: bool = False
    formerly: tuple[str, str] | None = None


@dataclass(frozen=True)
class Mapping:
    path: Path
    display: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class LoadedMapping:
    """One mapping file, read and parsed once: what `load_mapping` returns, and the fingerprint
    ("sha256:<hex>") of the very bytes parsed (plan.json binds a plan to them)."""

    path: Path
    mapping: Mapping | None
    findings: tuple[Finding, ...]
    fingerprint: str
