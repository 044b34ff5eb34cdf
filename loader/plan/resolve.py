"""Indexes over desired and live records, key matching, and reference resolution.

A reference (`Ref(entity, values, by)`) resolves to the id of a live record, or, when the record
is one this plan creates, to `PendingId(ref)` of that record's plan. Matching is exact; folded
(case/space) matches are only used to warn and to suggest ("did you mean ...?").
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from loader.plan.compare import fold, normalise
from loader.plan.model import PendingId
from loader.source.records import DesiredRecord, Ref, display_value
from loader.suggestions import closest

LiveRecord = Mapping[str, Any]


def key_text(value: Any) -> Any:
    """The exact form a key part is matched in: text, ids of `{"id": ...}` objects, PendingId as is."""
    if type(value) is str:  # the common case, first: this runs for every key part and reference
        return value
    if isinstance(value, dict) and "id" in value:
        return value["id"]
    if isinstance(value, (str, PendingId)) or value is None:
        return value
    return normalise(value)


def show_key(key: Sequence[Any]) -> str:
    """Key parts joined by '/', a Ref shown by its values."""
    if all_text(key):
        return "/".join(key)
    return "/".join(str(display_value(part)) for part in key)


def all_text(parts: Sequence[Any]) -> bool:
    """Whether every part is a text (str itself: its own exact, shown and JSON form)."""
    for part in parts:
        if type(part) is not str:
            return False
    return True


class Entry(NamedTuple):
    """One desired record after merging across blocks, with its plan ref and key fields.

    `exact_key` is the key as matched (`key_text` of each part) when no part is a reference, else
    None (the parts are resolved when matching). A tuple: one is made per desired record.
    """

    ref: str
    record: DesiredRecord
    key_fields: tuple[str, ...]
    exact_key: tuple[Any, ...] | None = None


def exact_key(key: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """`key_text` of each part, or None when a part is a reference (it must be resolved first)."""
    if all_text(key):  # the common case: texts are their own exact form
        return key if type(key) is tuple else tuple(key)
    if any(isinstance(p, Ref) for p in key):
        return None
    return tuple(key_text(p) for p in key)


def live_key(record: LiveRecord, by: tuple[str, ...]) -> tuple[Any, ...]:
    """The exact values of `by` in a live record: what its entry in `Resolver.live_index` is keyed by."""
    if len(by) == 1:
        value = record.get(by[0])
        return (value if type(value) is str else key_text(value),)
    return tuple(key_text(record.get(f)) for f in by)


class FormerLookup(Protocol):
    """The live record that had a key before, and its key now shown (`loader.plan.renumber.FormerKeys`)."""

    def __call__(self, entity: str, by: tuple[str, ...], values: tuple[Any, ...]) -> tuple[LiveRecord, str] | None: ...


class Resolution(NamedTuple):
    """What a Ref resolved to: a live id, a PendingId, or nothing (with a message)."""

    value: str | PendingId | None
    pending: str | None = None  # the ref of the created record it waits for
    problem: str | None = None
    planned: str | None = None  # the ref of the record of this plan it refers to (live or pending)


class Resolver:
    """Exact lookups over desired entries and live records; memoises key matches."""

    def __init__(self, entries: Sequence[Entry], live: Mapping[str, Sequence[LiveRecord]], *,
                 aliases: Mapping[tuple[str, tuple[str, ...]], Mapping[Any, LiveRecord]] | None = None,
                 released: Mapping[tuple[str, tuple[str, ...]], Collection[Any]] | None = None,
                 formers: FormerLookup | None = None, unselected: Mapping[str, Sequence[str]] | None = None):
        """`aliases`: per live index (entity, fields), keys that match another live record (a
        renumbered record answers to its new key); `released`: keys that no longer match their live
        record (a key renumbered away that a new record of the plan reuses); `formers`: the live
        record that had a key before (renumbered in an earlier cycle), for a reference to it;
        `unselected`: per entity, the blocks `--select` left out (`loader.source.block_selection`): a
        reference not resolved names them, and no live record of theirs is "not in source"."""
        self._aliases = aliases or {}
        self.unselected = unselected or {}
        self._released = released or {}
        self._formers = formers
        # references to a key a live record had before, by (entity, exact key): that record's key now;
        # `former_taken`: those whose key another live record holds now
        self.former_hits: dict[tuple[str, Any], str] = {}
        self.former_taken: dict[tuple[str, Any], str] = {}
        self._entries = entries
        self._entries_by_entity: dict[str, list[Entry]] = {}  # those of the entities referred to, when first asked
        self._live = live
        # Live records, desired entries and folded live keys by the values of `by`: a key of one field
        # by its value alone, not a tuple of it (48 bytes a record of the collection: `index_key`)
        self._live_index: dict[tuple[str, tuple[str, ...]], dict[Any, LiveRecord]] = {}
        self._desired_index: dict[tuple[str, tuple[str, ...]], dict[Any, Entry]] = {}
        self._folded: dict[tuple[str, tuple[str, ...]], dict[Any, LiveRecord]] = {}  # by folded values
        self._matches: dict[str, LiveRecord | None] = {}
        self._matching: set[str] = set()
        self._labels: dict[str, str] = {}
        # entity -> `Ref.by` -> `Ref.values` -> what they resolved to (each Ref's own values tuple the key)
        self._resolved: dict[str, dict[tuple[str, ...], dict[tuple[Any, ...], Resolution]]] = {}
        self._alone: dict[str, tuple[str]] = {}
        self._id_objects: dict[int, dict[str, Any]] = {}  # by the id of the value they hold (and keep alive)

    # ---- live side ---------------------------------------------------------------------------

    def live_records(self, entity: str) -> Sequence[LiveRecord]:
        return self._live.get(entity, ())

    def live_index(self, entity: str, by: tuple[str, ...]) -> dict[Any, LiveRecord]:
        """Live records of `entity` by the exact values of `by` (the first one wins on repeats), as
        `index_key` keys them: look a key up by `index_key(key)`."""
        index = self._live_index.get((entity, by))
        if index is None:
            index = {}
            if len(by) == 1:  # the common case: a key of one field (live_key's, without its call)
                (name,) = by
                for rec in self.live_records(entity):
                    value = rec.get(name)
                    index.setdefault(value if type(value) is str else key_text(value), rec)
            else:
                for rec in self.live_records(entity):
                    index.setdefault(live_key(rec, by), rec)
            if (entity, by) in self._aliases:
                for key in self._released.get((entity, by), ()):
                    index.pop(key, None)
                index.update(self._aliases[(entity, by)])
            self._live_index[(entity, by)] = index
        return index

    def live_label(self, live_id: str) -> str:
        """A readable name for a live id (its code, name or external id), else the id itself."""
        labels = self._labels
        if not labels:  # made once, over every live record
            for records in self._live.values():
                for rec in records:
                    shown = rec.get("code") or rec.get("external_id") or rec.get("name")
                    if shown and rec.get("id"):
                        labels[str(rec["id"])] = str(shown)
        return labels.get(live_id, live_id)

    # ---- desired side ------------------------------------------------------------------------

    def entries(self, entity: str) -> Sequence[Entry]:
        """The entries of `entity`, in order (gathered when first asked: only records referred to are)."""
        group = self._entries_by_entity.get(entity)
        if group is None:
            group = self._entries_by_entity[entity] = [e for e in self._entries if e.record.entity == entity]
        return group

    def _desired_index_for(self, entity: str, by: tuple[str, ...]) -> dict[Any, Entry]:
        """The entries of `entity` by their values of `by` (`index_key`)."""
        index = self._desired_index.get((entity, by))
        if index is None:
            index = {}
            if len(by) == 1:  # the common case: records referred to by one field, by its value alone
                (name,) = by
                for entry in self.entries(entity):
                    fields = entry.record.fields
                    if name in fields:
                        value = fields[name]
                        index.setdefault(value if type(value) is str else _desired_text(value), entry)
            else:
                for entry in self.entries(entity):
                    fields = entry.record.fields
                    if all(f in fields for f in by):
                        values = tuple(_desired_text(fields[f]) for f in by)
                        index.setdefault(values, entry)
            self._desired_index[(entity, by)] = index
        return index

    # ---- matching and resolution -------------------------------------------------------------

    def match(self, entry: Entry) -> LiveRecord | None:
        """The live record with exactly this entry's key, resolving reference key parts first."""
        index = self._live_index.get((entry.record.entity, entry.key_fields))
        if index is None:
            index = self.live_index(entry.record.entity, entry.key_fields)
        if entry.exact_key is not None:  # nothing to resolve: a lookup, not remembered
            return index.get(index_key(entry.exact_key))
        if not index:  # nothing live to match (as the live credentials often are): no need to resolve the key
            return None
        matches = self._matches
        if entry.ref in matches:
            return matches[entry.ref]
        if entry.ref in self._matching:  # a key that refers back to itself cannot match
            return None
        self._matching.add(entry.ref)
        try:
            parts = self.key_parts(entry)
            found = None if parts is None else index.get(index_key(parts))
        finally:
            self._matching.discard(entry.ref)
        matches[entry.ref] = found
        return found

    def key_parts(self, entry: Entry) -> tuple[Any, ...] | None:
        """The key with references resolved, or None when a part cannot be resolved."""
        if entry.exact_key is not None:
            return entry.exact_key
        parts = []
        for part in entry.record.key:
            if isinstance(part, Ref):
                resolved = self.resolve(part).value
                if resolved is None:
                    return None
                parts.append(resolved)
            else:
                parts.append(key_text(part))
        return tuple(parts)

    def resolve(self, ref: Ref) -> Resolution:
        """A live id, or PendingId of the record this plan creates, or a problem to report."""
        # Many records name the same target (a program's subjects, an applicant's credentials): what
        # a Ref resolved to is remembered, except while a key is being matched (a key that refers back
        # to itself resolves differently inside its own match than after it), and except a live id
        # found by two lookups (`_resolve`'s first case: remembering it kept an entry per record
        # referred to until the part's end, to save those two lookups).
        by_entity = self._resolved.get(ref.entity)
        if by_entity is None:
            by_entity = self._resolved[ref.entity] = {}
        memo = by_entity.get(ref.by)
        if memo is None:
            memo = by_entity[ref.by] = {}
        found = memo.get(ref.values)
        if found is None:
            found = self._resolve(ref)
            if not self._matching and (found.pending is not None or found.planned is None):
                memo[ref.values] = found
        return found

    def id_object(self, value: Any) -> dict[str, Any]:
        """`{"id": value}`, one object for every record that refers to `value` (a live id or a
        PendingId, as `resolve` gives it: one object per record referred to) in that shape. Never
        changed: a payload is read, and copied where it is changed."""
        made = self._id_objects.get(id(value))
        if made is None or made["id"] is not value:
            made = self._id_objects[id(value)] = {"id": value}
        return made

    def alone(self, ref: str) -> tuple[str]:
        """`(ref,)`, one tuple for every record that refers to the record `ref` alone (a program's
        subjects: each record's `refers_to` or `depends_on`, 48 bytes a record)."""
        one = self._alone.get(ref)
        if one is None:
            one = self._alone[ref] = (ref,)
        return one

    def _resolve(self, ref: Ref) -> Resolution:
        values = ref.values if type(ref.values) is tuple and all_text(ref.values) else tuple(map(key_text, ref.values))
        index = self._desired_index.get((ref.entity, ref.by))
        if index is None:
            index = self._desired_index_for(ref.entity, ref.by)
        entry = index.get(index_key(values))
        if entry is not None:
            live = self.match(entry)
            # Resolution(...) without its Python __new__ (made for every record referred to)
            if live is not None and live.get("id"):
                return tuple.__new__(Resolution, (str(live["id"]), None, None, entry.ref))
            return tuple.__new__(Resolution, (PendingId(entry.ref), entry.ref, None, entry.ref))
        live = self.live_index(ref.entity, ref.by).get(index_key(values))
        former = self._formers(ref.entity, ref.by, values) if self._formers is not None else None
        if live is not None and live.get("id"):
            if former is not None and str(former[0].get("id")) != str(live["id"]):
                self.former_taken[(ref.entity, index_key(values))] = former[1]
            return Resolution(str(live["id"]))
        if former is not None and former[0].get("id"):
            self.former_hits[(ref.entity, index_key(values))] = former[1]
            return Resolution(str(former[0]["id"]))
        return Resolution(None, problem=self._unresolved_message(ref, values))

    def _unresolved_message(self, ref: Ref, values: tuple[Any, ...]) -> str:
        shown = " ".join(f"{f} {v!r}" for f, v in zip(ref.by, ref.values, strict=False))
        message = f"no {ref.entity} with {shown} in the source or live"
        wanted = "/".join(str(v) for v in values)
        one = len(ref.by) == 1  # a one-field index holds each value alone (`index_key`)
        keys = [*self._desired_index_for(ref.entity, ref.by), *self.live_index(ref.entity, ref.by)]
        candidates = {str(k) if one else "/".join(str(v) for v in k) for k in keys}
        folded = [c for c in sorted(candidates) if fold(c) == fold(wanted)]
        close = folded[0] if folded else closest(wanted, sorted(candidates))
        if close is not None:
            message += f"; did you mean {close!r}?"
        left_out = self.unselected.get(ref.entity)
        if left_out:  # the record may be one a block not selected would create in this plan
            blocks = ", ".join(left_out)
            message += (f"; if block {blocks} creates it, select that block too (--select {left_out[0]})"
                        if len(left_out) == 1 else f"; if one of the blocks {blocks} creates it, select it too")
        return message

    def near_duplicate(self, entry: Entry) -> LiveRecord | None:
        """A live record whose key equals this entry's after case/space folding (no exact match)."""
        index = self._folded.get((entry.record.entity, entry.key_fields))
        if index is None:
            index = self._folded_index(entry.record.entity, entry.key_fields)
        if not index:  # nothing live to be near: the key's references need not be resolved
            return None
        parts = entry.exact_key if entry.exact_key is not None else self.key_parts(entry)
        if parts is None:
            return None
        if len(parts) == 1 and type(parts[0]) is str:  # the common case: _fold_key of one text, without its calls
            return index.get(_fold_text(parts[0]))
        return index.get(index_key(fold_key(parts)))

    def _folded_index(self, entity: str, by: tuple[str, ...]) -> dict[Any, LiveRecord]:
        """The live records of `entity` by their folded values of `by` (`fold_key`, then `index_key`)."""
        index = self._folded.get((entity, by))
        if index is None:
            index = {}
            one = len(by) == 1
            for values, rec in self.live_index(entity, by).items():
                index.setdefault(index_key(fold_key((values,) if one else values)), rec)
            self._folded[(entity, by)] = index
        return index


def fold_key(parts: Sequence[Any]) -> tuple[Any, ...]:
    """A key as `near_duplicate` compares it: each text but for case, spaces and Unicode form."""
    if len(parts) == 1 and type(parts[0]) is str:  # the common case: a key of one text
        return (_fold_text(parts[0]),)
    return tuple(_fold_text(p) if type(p) is str else fold(p) if isinstance(p, str) else p for p in parts)


def _fold_text(text: str) -> str:
    """fold(text), without normalising a text that cannot be a date (normalise leaves it as is); in
    one Unicode form (NFKC), so a code exported decomposed (NFD, as macOS writes it) meets its twin."""
    if len(text) >= 10 and text[4] == "-":
        return fold(text)
    folded = "".join(text.split()).casefold()
    return folded if folded.isascii() else unicodedata.normalize("NFKC", folded)


def index_key(values: tuple[Any, ...]) -> Any:
    """What the resolver's indexes (`Resolver.live_index`, the desired and folded ones) key values by:
    a value alone by itself, more than one as their tuple (an index of a collection's records holds
    no tuple per record: 48 bytes a record)."""
    return values[0] if len(values) == 1 else values


def _desired_text(value: Any) -> Any:
    return key_text(display_value(value))
