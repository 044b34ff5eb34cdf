"""Reading the sources off the event loop's back: in a child process when they are large.

`read_sources` is pure Python and holds the GIL; in a thread beside the event loop that fetches
pages it slowed every page down (a 250,000-record plan: reading 35 s alone, 59 s beside the fetch,
and the fetch 58.7 s against a 17.5 s floor). Large sources are therefore read in a child process
(`spawn`: nothing of this process, its threads or its sockets is inherited); the child sends the
SourceSet back pickled in chunks of records, and the parent unpickles them in a worker thread one
chunk at a time, so the event loop never waits for more than one chunk. Small sources (the common
case, and every test but one) are read in a thread as before: starting a process costs more.

Any failure in the child (a mapping file that cannot be read, a bug) is not carried across: the
sources are then read again here, in a thread, so the error raised is exactly the in-process one.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import pickle
from collections.abc import Sequence
from dataclasses import replace
from multiprocessing.connection import Connection

from loader.collector import collector_paused
from loader.profile import Profile
from loader.source.mapping import LoadedMapping
from loader.source.records import DesiredRecord
from loader.source.sources import BlockRecords, SourceSet, read_sources

CHILD_FROM_BYTES = 1024 * 1024  # source files this large together (about 50,000 rows) are read in a child process
CHUNK_RECORDS = 5_000
_FAILED = b"failed"


def source_bytes(mappings: Sequence[LoadedMapping]) -> int:
    """The size of the source files these mappings name (0 for any that cannot be found)."""
    sources = {block.source for loaded in mappings if loaded.mapping for block in loaded.mapping.blocks}
    total = 0
    for source in sources:
        try:
            total += source.stat().st_size
        except OSError:
            pass
    return total


async def read_off_loop(
    mappings: Sequence[LoadedMapping], profile: Profile, *, in_child: bool | None = None
) -> SourceSet:
    """`read_sources(mappings, profile)` without holding the event loop's GIL for its duration.

    The mappings are parsed already (once per run); a child process gets them pickled.

    `in_child`: None decides by the sources' size (CHILD_FROM_BYTES); True or False forces it.
    """
    if in_child is None:
        in_child = await asyncio.to_thread(source_bytes, mappings) >= CHILD_FROM_BYTES
    if in_child:
        sources = await _read_in_child(mappings, profile)
        if sources is not None:
            return sources
    return await asyncio.to_thread(read_sources, mappings, profile)


async def _read_in_child(mappings: Sequence[LoadedMapping], profile: Profile) -> SourceSet | None:
    context = multiprocessing.get_context("spawn")
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(list(mappings), profile, sending), daemon=True)
    child.start()
    sending.close()
    try:
        return await asyncio.to_thread(_receive, receiving)
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
            with collector_paused():  # this process only reads: see loader.collector
                sources = read_sources(mappings, profile)
        except BaseException:
            sending.send_bytes(_FAILED)
            return
        shells = tuple(replace(b, records=()) for b in sources.blocks)
        sending.send_bytes(pickle.dumps(replace(sources, blocks=shells), protocol=pickle.HIGHEST_PROTOCOL))
        for block in sources.blocks:
            records = block.records
            for start in range(0, len(records), CHUNK_RECORDS):
                sending.send_bytes(pickle.dumps(records[start : start + CHUNK_RECORDS], pickle.HIGHEST_PROTOCOL))
            sending.send_bytes(b"")
    finally:
        sending.close()


def _receive(receiving: Connection) -> SourceSet | None:
    """In a worker thread: the SourceSet, a chunk at a time (recv_bytes waits without the GIL)."""
    head = receiving.recv_bytes()
    if head == _FAILED:
        return None
    shell: SourceSet = pickle.loads(head)
    blocks: list[BlockRecords] = []
    for block in shell.blocks:
        records: list[DesiredRecord] = []
        while chunk := receiving.recv_bytes():
            records.extend(pickle.loads(chunk))
        blocks.append(replace(block, records=tuple(records)))
    return replace(shell, blocks=tuple(blocks))
