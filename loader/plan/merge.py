"""The source's records merged across blocks: one entry per (entity, key).

Rows of several blocks that give one record (same entity and key) merge into one entry when
their values agree; a value they disagree on is an error of that entry (contract section 5).
Pure. The entries are what `loader.plan.diff` plans, each with its plan ref ("<block>/<key>").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

from loader.findings import Finding
from loader.plan.resolve import Entry, all_text, exact_key, key_text, show_key
from loader.record_fields import CUSTOM
from loader.source.equality import same_source_value
from loader.source.records import DesiredRecord, Ref, display_value, quoted

if TYPE_CHECKING:
    from loader.plan.diff import BlockInput


class Merged(NamedTuple):
    """The blocks' records merged across blocks (`merged_entries`)."""

    entries: list[Entry]  # one per (entity, key), in source order
    findings: dict[str, list[Finding]]  # per entry ref: the values its rows disagree on
    owner: list[range]  # per block: where its entries are in `entries` (a block's new entries follow each other)
    firsts: Mapping[int, DesiredRecord]  # per entry merged of several rows: its first row's record, as read

    def first_record(self, position: int) -> DesiredRecord:
        """The record of the first row of the entry at `position`, as its block read it (the entry's
        own record, unless rows merged into it)."""
        first = self.firsts.get(position) if self.firsts else None
        return first if first is not None else self.entries[position].record


def merged_entries(blocks: Sequence[BlockInput]) -> Merged:
    """One entry per (entity, key): rows of several blocks that agree merge; disagreements are errors."""
    return Merged(*_merge(blocks))


def _merge(
    blocks: Sequence[BlockInput],
) -> tuple[list[Entry], dict[str, list[Finding]], list[range], dict[int, DesiredRecord]]:
    """One entry per (entity, key): rows of several blocks that agree merge; disagreements are errors.

    Returns the entries in source order, findings per entry ref, where the entries of each block
    are, and the first row's record of each entry rows merged into.
    """
    entries: list[Entry] = []
    firsts: dict[int, DesiredRecord] = {}
    positions: dict[tuple[str, tuple[str, ...]], dict[tuple[Any, ...], int]] = {}  # entity, key fields -> key -> index
    findings: dict[str, list[Finding]] = {}
    owner: list[range] = []
    new_tuple = tuple.__new__
    for b in blocks:
        start = len(entries)
        key_fields = tuple(b.key_fields)
        prefix = f"{b.block}/"
        entity: str | None = None
        at: dict[tuple[Any, ...], int] = {}
        for rec in b.records:
            if rec.entity != entity:  # a block's records are of its entity: this is looked up once a block
                entity = rec.entity
                at = positions.setdefault((entity, key_fields), {})
            key = rec.key
            if type(key) is tuple and ((len(key) == 1 and type(key[0]) is str) or all_text(key)):
                # the common case: texts are their own exact and shown form (one text checked without a call)
                exact: tuple[Any, ...] | None = key
                identity, shown = key, "/".join(key)
            elif type(key) is tuple and _texts_and_one_text_refs(key):  # a credential's: (applicant, type, name)
                # what the general case gives such a key, without its walks: no exact form, itself as identity
                exact, identity = None, key
                shown = "/".join([p if type(p) is str else p.values[0] for p in key])
            else:
                exact, shown = exact_key(key), show_key(key)
                identity = exact if exact is not None else _hashable(key)
            new = len(entries)
            index = at.setdefault(identity, new)  # one lookup: the key's tuple hashed once, not twice
            if index == new:
                # Entry(...), without its Python __new__
                entries.append(new_tuple(Entry, (prefix + shown, rec, key_fields, exact)))
                continue
            first = entries[index]
            firsts.setdefault(index, first.record)
            merged, conflicts = _merge_record(first.record, rec)
            entries[index] = first._replace(record=merged)
            findings.setdefault(first.ref, []).extend(conflicts)
        owner.append(range(start, len(entries)))
    return entries, findings, owner, firsts


def _texts_and_one_text_refs(key: tuple[Any, ...]) -> bool:
    """Whether each part is a text or a reference by one text (shown as that text)."""
    for part in key:
        if type(part) is not str and not (type(part) is Ref and len(part.values) == 1 and type(part.values[0]) is str):
            return False
    return True


def _hashable(key: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(key_text(p) if not isinstance(p, Ref) else p for p in key)


def _merge_record(first: DesiredRecord, other: DesiredRecord) -> tuple[DesiredRecord, list[Finding]]:
    fields = dict(first.fields)
    cells = dict(first.cells)
    conflicts = []
    for name, value in other.fields.items():
        if name == CUSTOM and isinstance(fields.get(name), Mapping) and isinstance(value, Mapping):
            labels = dict(fields[name])
            for label, v in value.items():
                cell_name = f"{CUSTOM}.{label}"
                if label in labels and not same_source_value(labels[label], v):
                    conflicts.append(_conflict(first, other, cell_name, labels[label], v))
                else:
                    labels.setdefault(label, v)
                    cells.setdefault(cell_name, other.place(cell_name))
            fields[name] = labels
        elif name in fields and not same_source_value(fields[name], value):
            conflicts.append(_conflict(first, other, name, fields[name], value))
        elif name not in fields:
            fields[name] = value
            cells[name] = other.place(name)
    also_rows = (*first.also_rows, (other.block, other.row), *other.also_rows)
    merged = replace(first, fields=fields, cells=cells, pii=first.pii | other.pii, also_rows=also_rows)
    return merged, conflicts


def _conflict(first: DesiredRecord, other: DesiredRecord, name: str, a: Any, b: Any) -> Finding:
    pii = name in first.pii or name in other.pii
    shown_a, shown_b = (quoted(display_value(v), pii) for v in (a, b))
    return Finding(
        "error",
        "conflicting-source-values",
        f"{first.entity} {show_key(first.key)} is given different {name} values: {shown_a} at "
        f"{first.place(name)} and {shown_b} at {other.place(name)}",
        first.place(name),
    )
