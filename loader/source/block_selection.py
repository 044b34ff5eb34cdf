"""`--select BLOCK`: a plan (or a validation) narrowed to some of the mapping files' blocks.

A block is named as the reports name it: by its name alone when no other mapping file given has a
block of that name, else as `FILE:BLOCK`, FILE being the mapping file as given, its file name or its
name without the suffix (`curriculum.yaml:subjects`, `curriculum:subjects`). The mapping files are
still read whole (their fingerprints bind a saved plan to them); the blocks not selected are left
out before any sheet is read, and what the planner must know of them is `Selected.unselected`: per
entity, the blocks not selected that load it, so that a reference the narrowed plan cannot resolve
says which block to select too, and live records those blocks may own are not called "not managed
here".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import NamedTuple

from loader.errors import UsageError
from loader.source.mapping import Block, LoadedMapping
from loader.suggestions import did_you_mean


class Selected(NamedTuple):
    """The mapping files with the selected blocks only, and per entity the names of the blocks not
    selected that load it (empty when nothing was narrowed)."""

    mappings: list[LoadedMapping]
    unselected: Mapping[str, tuple[str, ...]]


def selected_blocks(loaded: Sequence[LoadedMapping], names: Sequence[str]) -> Selected:
    """The blocks `names` select (every block when `names` is empty); a usage error naming the
    blocks there are when a name matches none, or matches blocks of two files."""
    if not names:
        return Selected(list(loaded), {})
    every = [(one, block) for one in loaded for block in (one.mapping.blocks if one.mapping else ())]
    unparsed = [str(one.path) for one in loaded if one.mapping is None]
    chosen: set[tuple[str, str]] = set()
    for name in names:
        chosen.update(_block_id(one, block) for one, block in _matching(name, every, unparsed))
    unselected: dict[str, list[str]] = {}
    for one, block in every:
        if _block_id(one, block) not in chosen:
            unselected.setdefault(block.entity, []).append(block_name(one, block, every))
    kept = [one if one.mapping is None else replace(one, mapping=replace(one.mapping, blocks=tuple(
        block for block in one.mapping.blocks if _block_id(one, block) in chosen))) for one in loaded]
    return Selected(kept, {entity: tuple(blocks) for entity, blocks in unselected.items()})


def block_name(one: LoadedMapping, block: Block, every: Sequence[tuple[LoadedMapping, Block]]) -> str:
    """How `--select` names `block`: its name alone, or `FILE:BLOCK` when another file has one so named."""
    shared = sum(1 for _, other in every if other.name == block.name) > 1
    return f"{one.path.name}:{block.name}" if shared else block.name


def _block_id(one: LoadedMapping, block: Block) -> tuple[str, str]:
    return str(one.path), block.name


def _matching(name: str, every: Sequence[tuple[LoadedMapping, Block]],
              unparsed: Sequence[str]) -> list[tuple[LoadedMapping, Block]]:
    """The blocks `name` names: exactly one, else a usage error saying which names there are (and
    which mapping files could not be parsed: `unparsed`, whose blocks are unknown)."""
    file, _, block_part = name.rpartition(":")
    found = [(one, block) for one, block in every if block.name == block_part
             and (not file or file in (str(one.path), one.path.as_posix(), one.path.name, one.path.stem))]
    names = [block_name(one, block, every) for one, block in every]
    if not found:
        there = f"select one of: {', '.join(names)}" if names else "the mapping files given have no blocks"
        broken = f"; {', '.join(unparsed)} could not be parsed: run `loader validate`" if unparsed else ""
        raise UsageError(
            f"--select {name}: no block of the mapping files given is named so" + did_you_mean(name, names),
            hint=there + broken,
        )
    if len(found) > 1:
        named = ", ".join(f"{one.path.name}:{block.name}" for one, block in found)
        raise UsageError(f"--select {name}: {len(found)} blocks are named so ({named})",
                         hint="name one as FILE:BLOCK, e.g. --select " + f"{found[0][0].path.name}:{found[0][1].name}")
    return found
