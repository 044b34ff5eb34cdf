"""The values of a unique group (a code unique across school, course, program and subject) that a
desired record claims and another record holds: desired records of the plan and live records, the
live ones added a collection (or a page) at a time as they come in."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from loader.plan.resolve import Entry, LiveRecord, Resolver, key_text


def unique_clashes(
    entries: Sequence[Entry],
    resolver: Resolver,
    group: tuple[str, tuple[str, ...]],
    describe: Callable[[LiveRecord], str],
) -> dict[str, list[str]]:
    """entry ref -> messages for values of a unique group's field claimed by another member entity."""
    claims = UniqueClaims(entries, group)
    for entity in claims.members:
        claims.catch_up(entity, resolver.live_records(entity))
    return claims.clashes(describe)


class UniqueClaims:
    """The claims on a unique group's values: the desired records' (found once), and the live records'
    that can clash, added a collection or a page at a time as they come in (`unique_clashes` at once)."""

    def __init__(self, entries: Sequence[Entry], group: tuple[str, tuple[str, ...]]):
        self.field, self.members = group
        field_name, members = group
        self._claimed: dict[Any, Entry] = {}  # value -> the first entry claiming it
        self._repeated: dict[Any, list[Entry]] = {}  # value -> every entry claiming it, if more than one
        claimed, repeated = self._claimed, self._repeated
        for entry in entries:
            record = entry.record
            if record.entity in members and field_name in record.fields:  # the entity first: a record's fields not read
                value = record.fields[field_name]
                value = value if type(value) is str else key_text(value)
                first = claimed.setdefault(value, entry)
                if first is not entry:
                    repeated.setdefault(value, [first]).append(entry)
        self._live_by_value: dict[Any, list[tuple[str, LiveRecord]]] = {}  # only the claims that can clash
        self._added: dict[str, int] = {}  # member entity -> its live records added so far

    def add(self, entity: str, records: Sequence[LiveRecord]) -> None:
        """The next live records of `entity`, in the order they came in."""
        field_name, claimed, repeated = self.field, self._claimed, self._repeated
        for rec in records:
            value = rec.get(field_name)
            value = value if type(value) is str else key_text(value)
            claimant = claimed.get(value)
            if claimant is not None and (claimant.record.entity != entity or value in repeated):
                self._live_by_value.setdefault(value, []).append((entity, rec))
        self._added[entity] = self._added.get(entity, 0) + len(records)

    def can_clash(self, entry: Entry, whole: Collection[str]) -> bool:
        """Whether `entry`'s value can still be claimed by another record, desired or live (`whole`: the
        members whose live records are all in, and added): `clashes` can name it, now or later."""
        record = entry.record
        if record.entity not in self.members or self.field not in record.fields:
            return False
        value = key_text(record.fields[self.field])
        if value in self._repeated or value in self._live_by_value:
            return True
        return any(member not in whole for member in self.members if member != record.entity)

    def holds(self, record: LiveRecord) -> bool:
        """Whether the live `record` is a claim that can clash (`clashes` describes it)."""
        value = record.get(self.field)
        claims = self._live_by_value.get(value if type(value) is str else key_text(value))
        return claims is not None and any(rec is record for _, rec in claims)

    def replace(self, entry: Entry, by: Entry) -> None:
        """`by` claims what `entry` claimed (the same record, made again), alone: `can_clash` was false."""
        value = key_text(entry.record.fields.get(self.field))
        if value is not None and self._claimed.get(value) is entry:
            self._claimed[value] = by

    def catch_up(self, entity: str, records: Sequence[LiveRecord]) -> None:
        """`records`, all of `entity`'s live records so far: those not added yet are added."""
        added = self._added.get(entity, 0)
        if len(records) > added:
            self.add(entity, records[added:] if added else records)

    def clashes(self, describe: Callable[[LiveRecord], str]) -> dict[str, list[str]]:
        """entry ref -> messages for values of the group's field claimed by another member entity."""
        field_name, claimed, repeated = self.field, self._claimed, self._repeated
        clashes: dict[str, list[str]] = {}
        order = {entity: n for n, entity in enumerate(self.members)}
        for value in {*self._live_by_value, *repeated}:  # the values that can clash (`clashes` is not ordered)
            first = claimed[value]
            # the live claims by member, in the order they came in (the members' pages may have interleaved)
            live_claims = sorted(self._live_by_value.get(value, ()), key=lambda claim: order.get(claim[0], 0))
            claimants = repeated.get(value)
            if claimants is None:
                if not live_claims:
                    continue  # the common case: a value one record claims, live only in its own entity if at all
                claimants = [first]
            elif _claimed_by_one_entity(first.record.entity, live_claims, claimants):
                continue
            for entry in claimants:
                messages = [
                    f"{field_name} {value!r} is already used live by {describe(rec)}"
                    for entity, rec in live_claims
                    if entity != entry.record.entity
                ]
                messages += [
                    f"{field_name} {value!r} is also claimed by {other.record.entity} {other.ref} "
                    f"({other.record.row})"
                    for other in claimants
                    if other.record.entity != entry.record.entity
                ]
                if messages:
                    clashes[entry.ref] = messages
        return clashes


def _claimed_by_one_entity(
    entity: str, live_claims: Sequence[tuple[str, LiveRecord]], claimants: Sequence[Entry]
) -> bool:
    for live_entity, _ in live_claims:
        if live_entity != entity:
            return False
    for other in claimants:
        if other.record.entity != entity:
            return False
    return True
