"""What the three-way compare of one record works with: its block's context, and the record's
plan as the compare changes it, field by field (`loader.plan.history_fields`).

Pure. A field the compare settles as a kept platform edit or a conflict becomes a `FieldOutcome`
here, with who changed it in the platform and when.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from loader.findings import Finding
from loader.history.decisions import Decision
from loader.history.digests import RecordDigests, Written
from loader.history.lines import FieldMark, Owner
from loader.plan.decisions_pass import WRITTEN, sheet_won_message
from loader.plan.masking import mask_value
from loader.plan.model import FieldOutcome, PendingId, RecordPlan
from loader.plan.three_way import Outcome, Policy

Who = tuple[str | None, int | None]
"""The live record's last update: (the service user, the time in epoch milliseconds)."""


@dataclass(frozen=True)
class RecordContext:
    """What the compare needs besides the record: its block as owner, the names its block went by
    before (`formerly`), whether it takes fields over, the policies of its fields, and the reviewers'
    conflicts decided for the sheet (`loader.plan.decisions_pass.SheetWins`: asked with the record,
    the field and the digest of the sheet's value)."""

    owner: Owner
    formerly: frozenset[Owner] = frozenset()  # every name its block had before, the whole chain
    take_over: bool = False
    policies: Mapping[str, Policy] = field(default_factory=dict)
    sheet_wins: Callable[[RecordPlan, str, str], Decision | None] | None = None
    gone: Callable[[Owner], bool] | None = None  # whether an owner's mapping file is no longer in the project

    def owns(self, owner: Owner) -> bool:
        return owner == self.owner or owner in self.formerly

    def decided_for_sheet(self, plan: RecordPlan, name: str, digest: str, findings: list[Finding]) -> bool:
        """Whether a reviewer decided this conflict for the sheet (then noted in `findings`): its value
        is written over the platform edit, as under `on_platform_edit: sheet`."""
        decision = self.sheet_wins(plan, name, digest) if self.sheet_wins is not None else None
        if decision is None:
            return False
        findings.append(Finding("warning", WRITTEN, sheet_won_message(decision, name), plan.source))
        return True


class RecordWork:
    """The record's plan as the compare changes it."""

    def __init__(self, plan: RecordPlan) -> None:
        self.status_path = plan.status_path
        self.status_held = False  # the sheet's status not moved to (a kept edit, a conflict, live's already)
        self.payload = dict(plan.payload)
        self.changes = {c.field: c for c in plan.changes}
        self.kept: list[FieldOutcome] = []
        self.conflicts: list[FieldOutcome] = []
        self.confirmed: list[str] = []
        self.findings: list[Finding] = []
        self.written_after: dict[str, Written] = {}
        self.confirmed_values: dict[str, Any] = {}  # the live values confirmed, of fields not personal

    def confirm(self, name: str, written: Written, value: Any, pii: bool) -> None:
        """A field found equal to the sheet: W moves to live (`written`), and the journal keeps
        `value` as the value after unless the field is personal."""
        self.confirmed.append(name)
        self.written_after[name] = written
        if not pii:
            self.confirmed_values[name] = value

    def hold(self, name: str, change_field: str | None = None) -> None:
        self.payload.pop(name, None)
        self.changes.pop(change_field or name, None)

    def found(self, outcome: Outcome, found: FieldOutcome) -> None:
        """A kept platform edit (`outcome` KEPT) or a conflict."""
        (self.kept if outcome is Outcome.KEPT else self.conflicts).append(found)


def field_outcome(name: str, sheet: Any, live: Any, mark: FieldMark, digests: RecordDigests, sheet_value: Any,
                  who: Who, pii: bool) -> FieldOutcome:
    """A kept edit or a conflict; the last loaded value is known when the sheet still holds it."""
    last = sheet if digests.value(name, sheet_value) == mark.written else None
    by, at = first_change(mark, who)
    return FieldOutcome(name, masked(sheet, pii), masked(live, pii), masked(last, pii), by, at, pii)


def first_change(mark: FieldMark, who: Who) -> Who:
    """Who changed a field in the platform and when: the first change the history noted, else the
    live record's last update (`who`)."""
    return (mark.edited[1], mark.edited[0]) if mark.edited is not None else who


def one_written(written: Written) -> str | None:
    """W of a field holding one value (None: a set's)."""
    return written if isinstance(written, str) else None


def masked(value: Any, pii: bool) -> Any:
    return mask_value(value) if pii else value


def pending(value: Any) -> bool:
    """Whether `value` holds an id known only once this plan creates its record."""
    if type(value) is str:
        return False
    if isinstance(value, PendingId):
        return True
    if isinstance(value, Mapping):
        return any(pending(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(pending(v) for v in value)
    return False
