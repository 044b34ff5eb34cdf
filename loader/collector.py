"""Pausing the cyclic garbage collector around work that allocates many containers in no cycle.

Reading 100,000 rows makes a few hundred thousand dicts and tuples that all live on; each
collection of the oldest generation walks every one of them again, which cost about a quarter
of the read (3.9 s -> 3.0 s CPU, three runs each). The same held for the HTML report (half its
time at 100,000 records). Reference counting still frees everything not in a cycle.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(*, keep_survivors: bool = False) -> Iterator[None]:
    """The collector off inside, back as it was after (it is process-wide: a thread beside this one
    runs without it meanwhile, which costs it nothing but the pauses it is spared).

    Objects made while it is off all wait in its youngest generation, so its first collection after
    walks every one of them (4 million objects: 0.3 s; at the end of a 100,000-record plan 0.47 s).
    `keep_survivors` moves those that outlive the block where no collection looks (`gc.freeze`):
    data made to be kept, like a plan. Reference counting still frees them.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if keep_survivors:
                gc.freeze()
            gc.enable()


YOUNG_WRITES = 10_000


@contextmanager
def collector_spaced(young: int = YOUNG_WRITES) -> Iterator[None]:
    """The collector's youngest generation collected after `young` new containers rather than 700
    inside (back as it was after).

    Work that makes and drops many small containers in bursts, like an apply's writes (each a few
    dozen dicts, tuples and futures alive for its round trip), sets off a collection every few
    writes: the count goes up with each container made, down with each freed, but never below
    zero, so burst after burst reaches 700 without anything lasting (over 100 passes in 2,000
    writes, about a tenth of the client's CPU). Cycles are still collected, a few at a time.
    """
    threshold = gc.get_threshold()
    gc.set_threshold(max(young, threshold[0]), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
