"""What comparing one record's fields gives: its payload, field changes, findings and dependencies.

Built up by `loader.plan.fields` (and `loader.plan.status`), then frozen into a RecordPlan by
`loader.plan.record`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from loader.findings import Finding
from loader.plan.model import FieldChange
from loader.source.records import Ref


def _alone(ref: str) -> tuple[str]:
    return (ref,)


class FieldPlan:
    """What comparing one record's fields gives (built up, then frozen into a RecordPlan).

    A plain class with slots: one is made per desired record. What most records have none of
    (findings, dependencies, references to records of this plan) starts as an empty tuple and
    grows by a new one, rather than a list made for every record and copied into a tuple after.
    """

    __slots__ = ("changes", "depends_at", "depends_on", "findings", "payload", "refers_to", "status_changed",
                 "status_path")

    def __init__(self) -> None:
        self.payload: dict[str, Any] = {}
        self.changes: list[FieldChange] = []
        self.findings: tuple[Finding, ...] = ()
        self.depends_on: tuple[str, ...] = ()
        # dependency ref -> the reference naming it and its field, for `reference_cell` (worked out
        # only for a record on a cycle: the others never need it)
        self.depends_at: Mapping[str, tuple[Ref, str]] = _NO_REFERENCES
        self.refers_to: tuple[str, ...] = ()  # records of this plan referred to by their live id
        self.status_path: tuple[str, ...] = ()
        self.status_changed = False

    def add_finding(self, finding: Finding) -> None:
        self.findings = (*self.findings, finding)

    def add_dependency(self, ref: str, reference: Ref, name: str, alone: Callable[[str], tuple[str]] = _alone) -> None:
        """The record waits for `ref`, a record this plan creates, named by `reference` in field `name`.

        The first reference naming it is kept. `alone(ref)` gives `(ref,)` (`Resolver.alone`: one
        tuple for every record that waits for `ref` alone).
        """
        if ref not in self.depends_on:
            self.depends_on = (*self.depends_on, ref) if self.depends_on else alone(ref)
            self.depends_at = {**self.depends_at, ref: (reference, name)}

    def add_reference(self, ref: str, alone: Callable[[str], tuple[str]] = _alone) -> None:
        """The record refers to `ref`, a live record of this plan (a stale check); `alone` as above."""
        if ref not in self.refers_to:
            self.refers_to = (*self.refers_to, ref) if self.refers_to else alone(ref)


_NO_REFERENCES: Mapping[str, tuple[Ref, str]] = MappingProxyType({})
