"""A plan's parts that share nothing, so each can be diffed as soon as its own collections are in.

Two blocks are in one part when their records could meet in the diff: they are of one entity, one
refers to the other's entity, or their entities share a unique group (a curriculum code is unique
across schools, courses, programs and subjects). The diff of a part reads only its blocks and the
live collections it needs, so planning the parts one by one gives the plan `plan_changes` gives for
all blocks at once (tests/plan/incremental/test_parts.py):

    for part in plan_parts(blocks, profile):            # in block order
        ... await the collections in part.entities, then plan_changes(part.blocks_of(blocks), ...)
    plan = joined_plan(part_plans)

In a plan of curriculum and applicants, the applicants and their credentials are diffed while the
subjects (the largest collection) are still arriving.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from loader.plan.diff import BlockInput
from loader.plan.model import BlockPlan, Plan
from loader.profile import Profile
from loader.source.records import Ref

B = TypeVar("B", bound=BlockInput)


@dataclass(frozen=True)
class PlanPart:
    """Blocks (by their index, in order) planned together and the live collections their plan reads."""

    indexes: tuple[int, ...]
    entities: tuple[str, ...]

    def blocks_of(self, blocks: Sequence[B]) -> list[B]:
        return [blocks[i] for i in self.indexes]


def plan_parts(blocks: Sequence[BlockInput], profile: Profile) -> list[PlanPart]:
    """The blocks split into parts that share no entity, in the order of their first block.

    Blocks with a repeated name stay in one part: a plan refers to records by block name, so such
    blocks are not independent (and the plan is refused for the repeated name anyway).
    """
    targets = [_referred_to(b) for b in blocks]
    needs = [with_groups([b.entity, *sorted(t)], profile) for b, t in zip(blocks, targets, strict=True)]

    def part(indexes: Sequence[int]) -> PlanPart:
        return PlanPart(tuple(indexes), tuple(dict.fromkeys(e for i in indexes for e in needs[i])))

    if len({b.block for b in blocks}) < len(blocks):
        return [part(range(len(blocks)))]
    parent = list(range(len(blocks)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_with: dict[str, int] = {}
    for index, entities in enumerate(needs):
        for entity in entities:
            other = first_with.setdefault(entity, index)
            a, b = root(index), root(other)
            if a != b:
                parent[max(a, b)] = min(a, b)
    members: dict[int, list[int]] = {}
    for index in range(len(blocks)):
        members.setdefault(root(index), []).append(index)
    return [part(indexes) for indexes in sorted(members.values())]


def joined_plan(parts: Sequence[Plan], order: Sequence[PlanPart]) -> Plan:
    """One plan of the parts' plans (made with one header): their blocks back in block order."""
    at: dict[int, BlockPlan] = {}
    for part, plan in zip(order, parts, strict=True):
        at.update(zip(part.indexes, plan.blocks, strict=True))
    return replace(parts[0], blocks=tuple(at[i] for i in sorted(at)))


def _referred_to(block: BlockInput) -> frozenset[str]:
    """The entities the block's records refer to, in their fields or keys."""
    entities: set[str] = set()
    for rec in block.records:
        _add_refs(entities, rec.fields.values())
        _add_refs(entities, rec.key)
    return frozenset(entities)


def with_groups(entities: Iterable[str], profile: Profile) -> list[str]:
    """The entities the profile has, each followed by the other members of its unique group, once."""
    out: list[str] = []
    for entity in entities:
        if entity not in profile.entities:
            continue
        group = profile.unique_group_of(entity)
        out += [entity, *(group[1] if group else ())]
    return list(dict.fromkeys(out))


def _add_refs(entities: set[str], values: Iterable[Any]) -> None:
    for value in values:
        if type(value) is str:  # the common case, first
            continue
        if isinstance(value, Ref):
            entities.add(value.entity)
        elif isinstance(value, (list, tuple)):
            entities.update(v.entity for v in value if isinstance(v, Ref))
