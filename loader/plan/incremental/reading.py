"""Reading the sources off the event loop's back: in a child process when they are large.

`read_sources` is pure Python and holds the GIL; in a thread beside the event loop that fetches
pages it slows every page down (docs/performance.md). Large sources are therefore read in a child process
(`spawn`: nothing of this process, its threads or its sockets is inherited); the child sends each
block's records pickled in chunks as soon as the block is read, then drops them (it never holds
more than one block's records beside the parent's copy), and the parent unpickles them in a worker
thread one chunk at a time, so the event loop never waits for more than one chunk. Small sources (the common
case, and every test but one) are read in a thread as before: starting a process costs more.

Mapping files that read different files are read in parallel, one child process per run of them
(as many as the machine has cores less one, `split_for_children`).

Any failure in a child (a mapping file that cannot be read, a bug) is not carried across: the
sources are then read again here, in a thread, so the error raised is exactly the in-process one.
"""

from __future__ import annotations

import asyncio
import io
import multiprocessing
import os
import pickle
from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from functools import partial
from itertools import pairwise
from multiprocessing.connection import Connection
from operator import attrgetter
from pathlib import Path
from typing import Any

from loader.places import CellRef
from loader.plan.feed_fetching import fetch_feed
from loader.profile import Profile
from loader.source.mapping import LoadedMapping
from loader.source.records import DesiredRecord, Ref
from loader.source.sources import (
    BlockRecords,
    SourceSet,
    files_read,
    joined,
    read_sources,
    readable_in_child,
    sources_size,
)

CHILD_FROM_BYTES = 1024 * 1024  # source files this large together (about 50,000 rows) are read in a child process
CHUNK_RECORDS = 200  # unpickling one holds the GIL throughout (see _unpickled): small chunks
# What the child sends, each message starting with its kind: a chunk of a block's records, the end of
# a block's records, the SourceSet (its blocks without their records, sent before), or that it failed.
_RECORDS, _BLOCK_END, _SOURCES, _FAILED = b"r", b"e", b"s", b"f"


def source_bytes(mappings: Sequence[LoadedMapping]) -> int:
    """The size of what these mappings read (0 for files that cannot be found)."""
    return sources_size(mappings)


async def read_off_loop(
    mappings: Sequence[LoadedMapping],
    profile: Profile,
    *,
    in_child: bool | None = None,
) -> SourceSet:
    """`read_sources(mappings, profile)` without holding the event loop's GIL for its duration.

    The mappings are parsed already (once per run); a child process gets them pickled.

    `in_child`: None decides by the sources' size (CHILD_FROM_BYTES); True or False forces it.
    """
    if in_child is None:
        in_child = await asyncio.to_thread(source_bytes, mappings) >= CHILD_FROM_BYTES
    if in_child and readable_in_child(mappings):  # each kind says whether a child may read it
        children = split_for_children(mappings)
        parts = await asyncio.gather(*(_read_in_child(part, profile) for part in children))
        if all(part is not None for part in parts):
            return joined([part for part in parts if part is not None])
    return await asyncio.to_thread(partial(read_sources, mappings, profile, fetch=fetch_feed))


def split_for_children(mappings: Sequence[LoadedMapping], processes: int | None = None) -> list[list[LoadedMapping]]:
    """The mapping files in consecutive runs, one child process each (at most `processes`, by default
    the machine's cores less one, which the event loop fetching pages needs), cut only where no file is read on
    both sides, the source bytes about even.

    Consecutive runs keep the order of blocks and findings exactly as one reading gives (`joined`).
    """
    count = max(1, processes if processes is not None else (os.cpu_count() or 1) - 1)
    files = [files_read(m) for m in mappings]
    sizes = [_size(f) for f in files]
    total = sum(sizes)
    # a cut before mapping i is possible when no file of mappings[:i] is read by mappings[i:]
    cuts = [i for i in range(1, len(mappings)) if not set().union(*files[:i]) & set().union(*files[i:])]
    chosen: list[int] = []
    before = 0
    for i, size in enumerate(sizes):
        before += size
        share = total * (len(chosen) + 1) / count
        if len(chosen) < count - 1 and (i + 1) in cuts and before >= share * 0.75:
            chosen.append(i + 1)
    bounds = [0, *chosen, len(mappings)]
    return [list(mappings[a:b]) for a, b in pairwise(bounds) if b > a]


def _size(files: set[Path]) -> int:
    total = 0
    for path in files:
        try:
            total += path.stat().st_size
        except OSError:
            pass
    return total


async def _read_in_child(mappings: Sequence[LoadedMapping], profile: Profile) -> SourceSet | None:
    context = multiprocessing.get_context("spawn")
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(list(mappings), profile, sending), daemon=True)
    child.start()
    sending.close()
    try:
        return await asyncio.to_thread(_unpickled, receiving)
    except EOFError:  # the child died without a word
        return None
    finally:
        receiving.close()
        if child.is_alive():
            child.terminate()
        await asyncio.to_thread(child.join)


def _child(mappings: list[LoadedMapping], profile: Profile, sending: Connection) -> None:
    try:
        try:
            sources = read_sources(mappings, profile, each_block=lambda block: _sent(block, sending),
                                   fetch=fetch_feed)
        except BaseException:
            sending.send_bytes(_FAILED)
            return
        sending.send_bytes(_SOURCES + pickle.dumps(sources, protocol=pickle.HIGHEST_PROTOCOL))
    finally:
        sending.close()


def _sent(block: BlockRecords, sending: Connection) -> BlockRecords:
    """In the child: the block's records sent as soon as it is read, in chunks; the block without them."""
    records = block.records
    for start in range(0, len(records), CHUNK_RECORDS):
        sending.send_bytes(_RECORDS + _pickled(records[start : start + CHUNK_RECORDS]))
    sending.send_bytes(_BLOCK_END)
    return replace(block, records=())


def _pickled(records: Sequence[DesiredRecord]) -> bytes:
    """The records pickled, each record, place and Ref as the call that makes it (what `_SharingRefs` reads)."""
    out = io.BytesIO()
    _RecordsAsCalls(out, pickle.HIGHEST_PROTOCOL).dump(records)
    return out.getvalue()


# The values a chunk of records is made of, each with its fields' values in order (its constructor's arguments).
_AS_CALLS = {kind: attrgetter(*(f.name for f in fields(kind))) for kind in (DesiredRecord, CellRef, Ref)}


class _RecordsAsCalls(pickle.Pickler):
    """A pickler writing each record, place and Ref as the call that makes it (`Ref(entity, values,
    by, cell)`, ...), for this pickler alone: unpickling calls the constructor, where a dataclass's
    own pickling would look up its fields and set them one by one for every record and cell."""

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        values = _AS_CALLS.get(kind)
        if values is None:
            return NotImplemented
        return kind, values(obj)


def _unpickled(receiving: Connection) -> SourceSet | None:
    """In a worker thread: each block's records as the child sends them (the child holds one block's
    at a time; recv_bytes waits without the GIL), then the SourceSet of the blocks without them;
    None when the child failed (at any point)."""
    blocks: list[tuple[DesiredRecord, ...]] = []
    records: list[DesiredRecord] = []
    refs: dict[tuple[Any, ...], Ref] = {}  # one Ref for the references to one record (_SharingRefs)
    while True:
        message = receiving.recv_bytes()
        tag = message[:1]
        if tag == _RECORDS:
            records.extend(_SharingRefs(message, refs).load())
        elif tag == _BLOCK_END:
            blocks.append(tuple(records))
            records = []
        elif tag == _SOURCES:
            shell: SourceSet = pickle.loads(memoryview(message)[1:])
            break
        else:
            return None
    whole = (replace(block, records=read) for block, read in zip(shell.blocks, blocks, strict=True))
    return replace(shell, blocks=tuple(whole))


class _SharingRefs(pickle.Unpickler):
    """Unpickles records making one Ref of equal references without a cell (a program's subjects
    name it once each): `refs` holds those made, across the chunks of a reading. The message is
    read where it is, after its kind."""

    def __init__(self, message: bytes, refs: dict[tuple[Any, ...], Ref]):
        file = io.BytesIO(message)  # shares the message's bytes (a memoryview of them was copied)
        file.seek(1)
        super().__init__(file)
        # Not a method: the unpickler keeps what find_class gives, and a bound method would make a
        # cycle of it, its memo and its buffer, left for the collector.
        self._ref = _ref_maker(refs)

    def find_class(self, module: str, name: str) -> Any:
        if module == Ref.__module__ and name == Ref.__qualname__:
            return self._ref
        return super().find_class(module, name)


def _ref_maker(refs: dict[tuple[Any, ...], Ref]) -> Callable[..., Ref]:
    def made(entity: str, values: tuple[str, ...], by: tuple[str, ...], cell: CellRef | None = None) -> Ref:
        if cell is not None or not all(type(value) is str for value in values):  # texts only: 1 == True
            return Ref(entity, values, by, cell)
        key = (entity, values, by)
        ref = refs.get(key)
        if ref is None:
            ref = refs[key] = Ref(entity, values, by)
        return ref

    return made
