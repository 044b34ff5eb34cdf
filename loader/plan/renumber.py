"""Renumbering (`renamed:`, contract section 11): which records a plan moves to a new key.

A block's source says, per row, the key a record had before (`loader.source.renames`). For each:
the old key live and the new one absent is a **renumber** (the record answers to the new key on
the same live id: an update of its key field); the new key's live record formerly had the old key
(the history says so) is already done; the new key live otherwise leaves nothing to renumber; both
live is an error naming both; neither is a create, with a warning. A row whose key is a code
renumbered away in the same plan is a create ordered after the renumber; two rows renaming to one
key, or one key renamed twice, are errors naming both; renumbering a record another block loaded
is an ownership error. Pure: values in, a `Renumbering` out; `loader.plan.diff` feeds it to the
resolver (the new key matches the old record) and to the records.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from loader.findings import Finding
from loader.history.digests import expand_id
from loader.history.lines import Owner
from loader.plan.model import RecordPlan
from loader.plan.resolve import Entry, LiveRecord, exact_key, index_key, live_key, show_key
from loader.source.records import Ref
from loader.source.renames import Rename

if TYPE_CHECKING:
    from loader.history.store import History

IndexName = tuple[str, tuple[str, ...]]  # (entity, key fields): a live index of the resolver


@dataclass
class Renumbering:
    """What a plan's renames come to. `aliases`: per live index, the new keys and the live record
    (of the old key) each matches; `released`: old keys a row of the plan reuses (not matched to
    the renumbered record); `renamed_from`: per record ref, its old key; `findings`: per record
    ref; `after`: per reusing record's ref, the renumbered record's ref it is ordered after;
    `moved`: per entity, the old keys (index form) renumbered away, with the new key shown."""

    aliases: dict[IndexName, dict[Any, LiveRecord]] = field(default_factory=dict)
    released: dict[IndexName, set[Any]] = field(default_factory=dict)
    renamed_from: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    findings: dict[str, list[Finding]] = field(default_factory=dict)
    after: dict[str, str] = field(default_factory=dict)
    moved: dict[str, dict[Any, str]] = field(default_factory=dict)
    # references resolved through the history's former keys, by (entity, key): the key now shown;
    # `taken`: those whose key another live record holds now (an error)
    formerly: dict[tuple[str, Any], str] = field(default_factory=dict)
    taken: dict[tuple[str, Any], str] = field(default_factory=dict)

    def note(self, ref: str, finding: Finding) -> None:
        self.findings.setdefault(ref, []).append(finding)


def plan_renumbering(blocks: Sequence[Any], entries: Sequence[Entry], live: Mapping[str, Sequence[LiveRecord]],
                     history: History | None) -> Renumbering:
    """The renumbering of the blocks' renames (`BlockRecords.renames`) against `live`."""
    found = Renumbering()
    for block in blocks:
        renames: Sequence[Rename] = getattr(block, "renames", ())
        if renames:
            _block(found, block, renames, entries, live, history)
    return found


def _block(found: Renumbering, block: Any, renames: Sequence[Rename], entries: Sequence[Entry],
           live: Mapping[str, Sequence[LiveRecord]], history: History | None) -> None:
    entity, key_fields = block.entity, tuple(block.key_fields)
    index: dict[Any, LiveRecord] = {}
    for rec in live.get(entity, ()):
        index.setdefault(index_key(live_key(rec, key_fields)), rec)
    desired = {index_key(e.exact_key): e for e in entries
               if e.record.entity == entity and e.key_fields == key_fields and e.exact_key is not None}
    chosen = _one_per_key(found, renames, desired)
    if getattr(block, "renamed_as", "update") == "successor":
        return  # a new record linked to the old one (its `Replaces` label): nothing moves to a new key
    for rename in chosen:
        entry = desired.get(_exact(rename.new))
        if entry is None:
            continue
        judged = _judged(rename, index, block, history)
        if isinstance(judged, Finding):
            found.note(entry.ref, judged)
        elif judged is not None:
            _renumbered(found, (entity, key_fields), rename, entry, judged, desired)


def _judged(rename: Rename, index: Mapping[Any, LiveRecord], block: Any,
            history: History | None) -> LiveRecord | Finding | None:
    """What one rename of `block` comes to against the live records `index`: the live record of its
    old key to renumber, a finding (both live, neither live, another block's record), or None
    (renumbered already, as the history says, or nothing to renumber)."""
    entity = block.entity
    live_new, live_old = index.get(_exact(rename.new)), index.get(_exact(rename.old))
    if live_new is not None:
        if live_old is not None and not _formerly(history, entity, live_new, rename.old):
            return Finding(
                "error", "renumber-both-live",
                f"{entity} {show_key(rename.old)} (id {live_old.get('id')}) and {show_key(rename.new)} (id "
                f"{live_new.get('id')}) are both live: renumbering would make two records of one; retire one "
                "by hand, or clear the row's previous key", rename.cell)
        return None
    if live_old is None:
        return Finding("warning", "renumber-neither-live",
                       f"neither {show_key(rename.old)} nor {show_key(rename.new)} is a live {entity}: "
                       f"{show_key(rename.new)} is created", rename.cell)
    owner = _other_owner(history, entity, live_old, block)
    if owner is not None:
        return Finding("error", "field-owned-elsewhere",
                       f"{entity} {show_key(rename.old)} is loaded by block {owner.block!r} of {owner.file}: renumber "
                       f"it there, or say `take_over: true` on block {block.block!r}", rename.cell)
    return live_old


def _renumbered(found: Renumbering, name: IndexName, rename: Rename, entry: Entry, live_old: LiveRecord,
                desired: Mapping[Any, Entry]) -> None:
    """Record the renumber of `live_old` to the row `entry`: the new key matches it, and its old key
    either names another row of the plan (created after the renumber) or still finds it."""
    new, old = _exact(rename.new), _exact(rename.old)
    found.aliases.setdefault(name, {})[new] = live_old
    found.renamed_from[entry.ref] = tuple(rename.old)
    reuse = desired.get(old)
    if reuse is not None:  # the old key names another record now: created once the renumber is done
        found.released.setdefault(name, set()).add(old)
        found.after[reuse.ref] = entry.ref
    else:  # a reference to the old key still finds the renumbered record
        found.moved.setdefault(name[0], {})[old] = show_key(rename.new)


def _one_per_key(found: Renumbering, renames: Sequence[Rename], desired: Mapping[Any, Entry]) -> list[Rename]:
    """The renames that name one old key for one new key: two rows renaming to one key, or one key
    renamed twice, are errors naming both rows (neither is renumbered)."""
    by_new: dict[Any, list[Rename]] = {}
    by_old: dict[Any, list[Rename]] = {}
    for rename in renames:
        group = by_new.setdefault(_exact(rename.new), [])
        if all(_exact(r.old) != _exact(rename.old) for r in group):
            group.append(rename)
        by_old.setdefault(_exact(rename.old), []).append(rename)
    refused: set[int] = set()
    for group in by_new.values():
        if len(group) > 1:
            _refuse(found, desired, group, f"rows rename {len(group)} keys to {show_key(group[0].new)}: "
                    f"{_cells(group)}; keep one previous key")
            refused.update(id(r) for r in group)
    for group in by_old.values():
        news = {_exact(r.new) for r in group}
        if len(news) > 1:
            _refuse(found, desired, group, f"{show_key(group[0].old)} is renamed twice: {_cells(group)}; "
                    "keep it on one row")
            refused.update(id(r) for r in group)
    return [r for r in renames if id(r) not in refused]


def _refuse(found: Renumbering, desired: Mapping[Any, Entry], group: Sequence[Rename], message: str) -> None:
    for rename in group:
        entry = desired.get(_exact(rename.new))
        if entry is not None and not any(f.message == message for f in found.findings.get(entry.ref, ())):
            found.note(entry.ref, Finding("error", "renumber-ambiguous", message, rename.cell))


def _cells(group: Sequence[Rename]) -> str:
    return ", ".join(f"{show_key(r.old)} → {show_key(r.new)} ({r.cell})" for r in group)


def _exact(key: tuple[Any, ...]) -> Any:
    exact = exact_key(key)
    return index_key(exact if exact is not None else key)


def _formerly(history: History | None, entity: str, live_new: LiveRecord, old: tuple[Any, ...]) -> bool:
    """Whether the history says the record now live as the new key had the old key before."""
    if history is None or not live_new.get("id"):
        return False
    line = history.line_by_id(entity, str(live_new["id"]))
    return line is not None and history.digester.key_token(entity, old) in line.former_keys


def _other_owner(history: History | None, entity: str, live_old: LiveRecord, block: Any) -> Owner | None:
    """The owner of the old record's fields when none of them is this block's (another block loaded
    it), unless the block takes fields over."""
    if history is None or not live_old.get("id"):
        return None
    rules = getattr(block, "history_rules", None)
    if rules is not None and rules.take_over:
        return None
    line = history.line_by_id(entity, str(live_old["id"]))
    if line is None or not line.fields:
        return None
    mine = {Owner(getattr(block, "mapping_file", None) or block.source_file, block.block)}
    if rules is not None and rules.formerly:
        mine.add(Owner(*rules.formerly))
    owners = {mark.owner for mark in line.fields.values()}
    return None if owners & history.head.former_names(frozenset(mine)) else min(owners)


class FormerKeys:
    """Live records by a key they had before (the history's former keys): what a reference to a key
    renumbered in an earlier cycle finds. Entities with personal fields are not looked in (their ids
    are kept only as keyed tokens)."""

    def __init__(self, history: History, live: Mapping[str, Sequence[LiveRecord]],
                 keys: Callable[[str], Sequence[str]] | None = None) -> None:
        """`keys`: an entity's key fields (a reference by other fields is not looked for)."""
        self._keys = keys
        self._history = history
        self._live = live
        self._by_id: dict[str, dict[str, LiveRecord]] = {}

    def __call__(self, entity: str, by: tuple[str, ...], values: tuple[Any, ...]) -> tuple[LiveRecord, str] | None:
        """(the live record that had the key `values` of the fields `by`, its key now shown), or None."""
        history = self._history
        if history.digester.is_personal(entity) or not history.snapshot.has_former_keys(entity):
            return None
        if self._keys is not None and tuple(self._keys(entity)) != tuple(by):
            return None
        now = history.snapshot.key_for_former(entity, history.digester.key_token(entity, values))
        if now is None:
            return None
        line = history.snapshot.get(entity, now)
        if line is None:
            return None
        by_id = self._by_id.get(entity)
        if by_id is None:
            by_id = self._by_id[entity] = {str(rec.get("id")): rec for rec in self._live.get(entity, ())}
        record = by_id.get(expand_id(line.live_id))
        if record is None:
            return None
        return record, "/".join(str(part) for part in json.loads(now)) if now.startswith("[") else now


def renumbered(planned: list[RecordPlan], linked: dict[str, RecordPlan], linked_at: dict[str, list[int]],
               entries: Sequence[Entry], renumbering: Renumbering) -> None:
    """The planned records (in the order of `entries`) with what the renumbering says of each: its
    old key, its findings, the renumbered record a reuse is ordered after, and a warning on each
    reference to a key renumbered away; the records changed join `linked` (cycles and errors are
    looked at next)."""
    for at, (entry, plan) in enumerate(zip(entries, planned, strict=True)):
        changed = _with_renumbering(plan, renumbering)
        warnings = _reference_warnings(entry, renumbering) \
            if renumbering.moved or renumbering.formerly or renumbering.taken else ()
        if warnings:
            changed = replace(changed, findings=(*changed.findings, *warnings))
        if changed is not plan:
            planned[at] = changed
            if changed.ref not in linked:
                linked_at.setdefault(changed.ref, []).append(at)
            linked[changed.ref] = changed


def _with_renumbering(plan: RecordPlan, renumbering: Renumbering) -> RecordPlan:
    ref = plan.ref
    if ref not in renumbering.renamed_from and ref not in renumbering.findings and ref not in renumbering.after:
        return plan
    changes: dict[str, Any] = {}
    if ref in renumbering.renamed_from and plan.live_id is not None:
        changes["renamed_from"] = renumbering.renamed_from[ref]
    if ref in renumbering.findings:
        changes["findings"] = (*plan.findings, *renumbering.findings[ref])
    if ref in renumbering.after and renumbering.after[ref] not in plan.depends_on:
        changes["depends_on"] = (*plan.depends_on, renumbering.after[ref])
    return replace(plan, **changes) if changes else plan


def _reference_warnings(entry: Entry, renumbering: Renumbering) -> tuple[Finding, ...]:
    """A finding for each reference of the record to a key renumbered away: in this plan, or in an
    earlier cycle (found through the history: a warning; an error when another record has that key
    now)."""
    found = []
    for name, value in entry.record.fields.items():
        for ref in value if isinstance(value, tuple) else (value,):
            if not isinstance(ref, Ref):
                continue
            exact = _exact(ref.values)
            moved = renumbering.moved.get(ref.entity)
            new = moved.get(exact) if moved else None
            place = ref.cell or entry.record.place(name)
            if new is not None:
                found.append(Finding(
                    "warning", "renumbered-reference",
                    f"{name}: {ref.entity} {show_key(ref.values)} is renumbered {new} in this plan: it still "
                    "resolves, but update the sheet", place))
            elif (ref.entity, exact) in renumbering.formerly:
                found.append(Finding(
                    "warning", "renumbered-reference",
                    f"{name}: {ref.entity} {show_key(ref.values)} is {renumbering.formerly[ref.entity, exact]} since "
                    "an earlier apply renumbered it: update the sheet", place))
            elif (ref.entity, exact) in renumbering.taken:
                found.append(Finding(
                    "error", "renumbered-reference",
                    f"{name}: {ref.entity} {show_key(ref.values)} is {renumbering.taken[ref.entity, exact]} since an "
                    f"earlier apply renumbered it, and another live {ref.entity} has {show_key(ref.values)} now: name "
                    "the one meant by its key now", place))
    return tuple(found)
