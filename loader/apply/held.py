"""Records held back while a saved plan's stale check runs beside the writes (`loader.apply.stale`).

The records the check looks at, and every record referring to one of them by its live id (skipped
with it when it is stale), are `held`: the executor parks each of them when it comes up ready
(`park`), and the others go ahead. When the check answers (`answered`), its skips are applied as
they would have been before the first write, and the parked records not skipped are released. A
check that fails skips the records it was checking, saying why, rather than writing them unchecked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from loader.apply.stale import StaleCheck, to_check
from loader.plan.model import RecordPlan


class HeldRecords:
    """The records waiting for a stale check's answer (none when there is no check)."""

    def __init__(self, check: StaleCheck | None, referrers: Callable[[str], Iterable[str]]) -> None:
        self.check = check
        self.checked: set[str] = set(check.checked) if check is not None else set()
        self.held: set[str] = set()
        self.parked: list[str] = []
        queue = list(self.checked)
        while queue:  # the checked records and, through one another, those referring to them
            ref = queue.pop()
            if ref not in self.held:
                self.held.add(ref)
                queue.extend(referrers(ref))

    def take(self, records: Iterable[RecordPlan]) -> None:
        """Records read while the apply runs, each after those it refers to: held when the check
        looks at them or they refer to one held (the check, started before they were read, waits
        for them: `start_stale_check_later`)."""
        if self.check is None:
            return
        for record in records:
            if to_check(record):
                self.checked.add(record.ref)
                self.held.add(record.ref)
            elif any(target in self.held for target in record.refers_to):
                self.held.add(record.ref)

    @property
    def waiting(self) -> bool:
        """The check has not been answered (taken in by `answered`) yet."""
        return self.check is not None

    @property
    def answer(self) -> asyncio.Task[dict[str, str]] | None:
        return None if self.check is None else self.check.answer

    def park(self, ref: str) -> bool:
        """Hold `ref` (ready to be written) until the answer, when it waits for it."""
        if self.check is not None and ref in self.held:
            self.parked.append(ref)
            return True
        return False

    def answered(self) -> tuple[dict[str, str], list[str]]:
        """The check's skips (ref -> why) and the records parked meanwhile; nothing is held after."""
        assert self.check is not None
        task, checked = self.check.answer, self.checked
        self.check = None
        try:
            skip = task.result()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # any failure of the check: its records are not written, saying why
            while isinstance(error, ExceptionGroup):  # the listing of one collection among several
                error = error.exceptions[0]
            why = f"not applied: could not check whether it changed in the service since the plan ({error})"
            skip = {ref: why for ref in sorted(checked)}
        parked, self.parked = self.parked, []
        return skip, parked

    def cancel(self) -> None:
        """Stop the check when the apply ends without its answer (interrupted, or failed)."""
        if self.check is not None and not self.check.answer.done():
            self.check.answer.cancel()
