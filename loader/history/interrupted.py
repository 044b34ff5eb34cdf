"""Which applies were interrupted, and when their writes can have happened.

An apply killed before its end leaves a journal with no end line; the next command folds it in. Its
last writes may have landed in the service without being journaled: live records the loader's own
user changed after the line the history holds. Those are that apply's, adopted by the plan, never
"the history is behind". They happened after the apply began and before the next apply began (one
apply at a time writes a history: `loader.history.locking`), so each interrupted apply gives a window
of time, however many applies came after it: a write of the loader's own user outside every window
is one the history should know, and does not.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from loader.history.files import damaged
from loader.history.journal import ApplyInfo
from loader.history.journal_reading import first_and_last_line, info_from

# The window's edges widened by this much: the service stamps its records by its own clock, the
# journals by the loader's machine's. (A write the next apply made is journaled: its line is live's.)
CLOCK_MARGIN_MS = 60_000


class Interrupted(NamedTuple):
    """An interrupted apply, and when the next apply began (epoch ms; None: none came after it)."""

    info: ApplyInfo
    start_ms: int
    next_start_ms: int | None

    def holds(self, epoch_ms: int) -> bool:
        """Whether a write at `epoch_ms` (the service's time) can be this apply's."""
        return epoch_ms >= self.start_ms - CLOCK_MARGIN_MS and (
            self.next_start_ms is None or epoch_ms < self.next_start_ms + CLOCK_MARGIN_MS)


def interrupted_applies(journals: Iterable[Path]) -> tuple[Interrupted, ...]:
    """The interrupted applies among the finished `journals` (each read by its first and last line
    only), oldest first."""
    heads = [(info, finished, _started(info)) for info, finished in map(_head, sorted(journals))]
    found = []
    for at, (info, finished, start) in enumerate(heads):
        if info is not None and start is not None and not finished:
            later = next((h[2] for h in heads[at + 1:] if h[2] is not None), None)
            found.append(Interrupted(info, start, later))
    return tuple(found)


def _head(path: Path) -> tuple[ApplyInfo | None, bool]:
    """(the journal's header, whether it has an end line); None for an empty journal (an apply
    killed as it made it). A header that cannot be read is a `HistoryError` naming the journal."""
    first, last = first_and_last_line(path)
    if not first:
        return None, True
    try:
        info = info_from(json.loads(first))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise damaged(f"its first line is not a journal's header ({type(error).__name__}: {error})", path) from None
    try:
        end = json.loads(last)
    except ValueError:
        return info, False
    return info, isinstance(end, dict) and "end" in end


def _started(info: ApplyInfo | None) -> int | None:
    """When the apply began (epoch ms): to the millisecond by its id (`20261125T192157369Z-…`),
    else to the second by its header."""
    if info is None:
        return None
    try:
        return int(datetime.strptime(info.apply_id[:19], "%Y%m%dT%H%M%S%f%z").timestamp() * 1000)
    except ValueError:
        pass
    try:
        return int(datetime.fromisoformat(info.time).timestamp() * 1000)
    except ValueError:
        return None
