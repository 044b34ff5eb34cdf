"""A plan's findings as reports show them: one per cause, each with its place and count, in the
order of the plan (plan-level first, then by block and record)."""

from __future__ import annotations

from dataclasses import replace

from loader.findings import Finding
from loader.plan.model import Plan
from loader.report.finding_groups import ShownFinding, group_findings
from loader.report.view import clean, label, place
from loader.words import plural


def shown_findings(plan: Plan) -> list[ShownFinding]:
    """The plan's findings one per cause (`loader.report.finding_groups`), plan-level first, then by block; a
    finding about a record names its key. Each record stays blocked by its own findings."""
    items: list[tuple[str, str, Finding]] = [("", "", f) for f in plan.findings]
    for b in plan.blocks:
        items += [(b.name, b.name, f) for f in b.findings]
        for r in b.records:
            for f in r.findings:
                items.append((r.ref, b.name, f if f.key else replace(f, key=label(r))))
    return group_findings(items)


def findings_of(plan: Plan, severity: str) -> list[tuple[str, str, int]]:
    """(place, message, count) of each cause of one severity (the message with its count and first
    cells where it is found on several rows), made safe to print; a record's key beside its cell."""
    return [(shown_place(f), clean(f.text), f.count) for f in shown_findings(plan) if f.severity == severity]


def findings_count(found: list[tuple[str, str, int]]) -> str:
    """How many findings and causes a section of findings shows: `3`, `16,264 in 2 causes`."""
    total = sum(n for _, _, n in found)
    return f"{total:,}" if total == len(found) else f"{total:,} in {plural(len(found), 'cause')}"


def shown_place(finding: ShownFinding) -> str:
    """The place of a shown finding, relative to the working directory, with the record's key beside it."""
    where = place(finding.where)
    return f"{where} ({clean(finding.key)})" if finding.key and where else where
