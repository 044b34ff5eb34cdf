"""`custom_attributes` against their history: the three-way compare label by label.

Pure. Each label the sheet manages is compared as a field of its own (its mark under
`custom_attributes.<label>`), under its own policy, else the field's; the labels to write are sent
in the live map (PATCH replaces the map), a kept platform edit or a conflict left as live has it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loader.history.digests import RecordDigests
from loader.history.lines import FieldMark, label_field
from loader.plan.model import RecordPlan
from loader.plan.record_work import RecordContext, RecordWork, Who, field_outcome, one_written
from loader.plan.three_way import Outcome, Policy, compare_value
from loader.record_fields import CUSTOM
from loader.source.records import DesiredRecord


class LabelsCompare:
    """One record's labels compared into `work` (`run`)."""

    def __init__(self, work: RecordWork, plan: RecordPlan, desired: DesiredRecord | None, live: Mapping[str, Any],
                 marks: Mapping[str, FieldMark], digests: RecordDigests, context: RecordContext, who: Who) -> None:
        self.work, self.plan, self.desired, self.marks = work, plan, desired, marks
        self.digests, self.context, self.who = digests, context, who
        self.sheet: dict[str, Any] = dict(desired.fields.get(CUSTOM) or {}) if desired is not None else {}
        self.live: Mapping[str, Any] = live.get(CUSTOM) or {}
        self.pii_all = desired is not None and CUSTOM in desired.pii

    def run(self) -> None:
        sending = {label: self.sheet[label] for label in sorted(self.sheet) if self._label(label)}
        self._payload(sending)

    def _label(self, label: str) -> bool:
        """One label settled in `work`: whether its sheet value is to be sent."""
        name = label_field(label)
        value, live_value = self.sheet[label], self.live.get(label)
        mark = self.marks.get(name)
        written = one_written(mark.written) if mark is not None else None
        policy = self.context.policies.get(name, self.context.policies.get(CUSTOM, Policy.KEEP))
        outcome = compare_value(value, live_value, written, policy, lambda v: self.digests.value(name, v)).outcome
        pii = self.pii_all or (self.desired is not None and name in self.desired.pii)
        work = self.work
        if outcome is Outcome.CONFLICT and not pii \
                and self.context.decided_for_sheet(self.plan, name, self.digests.value(name, value), work.findings):
            outcome = Outcome.UPDATE
        if outcome is Outcome.UPDATE:
            work.written_after[name] = self.digests.value(name, value)
            return True
        work.changes.pop(name, None)
        if outcome is Outcome.UNCHANGED:
            now = self.digests.value(name, live_value)
            if written != now:
                work.confirm(name, now, live_value, pii)
            return False
        assert mark is not None  # a kept edit or a conflict has a W
        work.found(outcome, field_outcome(name, value, live_value, mark, self.digests, value, self.who, pii))
        return False

    def _payload(self, sending: Mapping[str, Any]) -> None:
        """The payload's labels: live's with those `sending` written (an empty value removes its label);
        none when nothing is sent."""
        payload = self.work.payload
        if CUSTOM not in payload:
            return
        if not sending:
            payload.pop(CUSTOM)
            return
        merged = dict(self.live)
        for label, value in sending.items():
            if value is None or value == "":
                merged.pop(label, None)
            else:
                merged[label] = value
        payload[CUSTOM] = merged
