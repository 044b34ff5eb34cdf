"""`--format github`: findings as GitHub Actions workflow annotations, and a job-summary Markdown.

Annotations (`::error file=…,line=…,col=…::message`) go to stdout, where the runner picks them up;
mapping places carry line and column, so the error shows on the line in the pull request's diff.
The Markdown is appended to the file `$GITHUB_STEP_SUMMARY` names (the job summary), or printed to
stdout after the annotations when that variable is not set (outside GitHub Actions).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from loader.findings import Finding
from loader.plan.model import Plan
from loader.report.finding_groups import ShownFinding
from loader.report.machine import place_of
from loader.words import plural

SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding | ShownFinding, context: str = "") -> str:
    """One workflow command for a finding (a cause, with its count and first cells): file, line and
    column where the place has them."""
    if isinstance(finding, Finding):
        finding = ShownFinding(finding.severity, finding.code, finding.message, finding.where, context, key=finding.key)
    level = "error" if finding.severity == "error" else "warning"
    place = place_of(finding.where)
    properties: list[str] = []
    message = finding.text
    if place is not None:
        properties.append(f"file={_escape_property(place['file'])}")
        if place["kind"] == "mapping":
            properties += [f"line={place['line']}", f"col={place['col']}"]
        else:
            message = f"{finding.place_text}: {message}"  # a workbook has no lines: the cell goes in the text
    title = f"{context}: {finding.code}" if context else finding.code
    properties.append(f"title={_escape_property(title)}")
    return f"::{level} {','.join(properties)}::{_escape_data(message)}"


def print_annotations(findings: Iterable[ShownFinding], out: TextIO | None = None) -> None:
    """An annotation per cause (`loader.report.finding_groups`)."""
    out = out or sys.stdout
    for finding in findings:
        print(annotation(finding, finding.context), file=out)


def print_conflict_annotations(plan: Plan, out: TextIO | None = None) -> None:
    """A warning per conflict (a field changed both in the sheet and in the platform since the loader
    last wrote it: held, not written), at the record's row. Personal values are not named."""
    out = out or sys.stdout
    for record in plan.records():
        for conflict in record.conflicts:
            values = "" if conflict.pii else f": sheet {conflict.sheet!r}, live {conflict.live!r}"
            message = (f"{record.source} ({', '.join(map(str, record.key))}): {conflict.field} changed in the "
                       f"sheet and in the platform since the loader last wrote it{values}; held, not written")
            title = _escape_property(f"{record.block}: conflict")
            print(f"::warning title={title}::{_escape_data(message)}", file=out)


def write_summary(markdown: str, out: TextIO | None = None) -> None:
    """Append to the job summary file when running in GitHub Actions, else print."""
    target = os.environ.get(SUMMARY_VARIABLE)
    if target:
        with Path(target).open("a", encoding="utf-8") as summary:
            summary.write(markdown if markdown.endswith("\n") else markdown + "\n")
        return
    print(markdown, file=out or sys.stdout)


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def validate_summary(document: dict[str, object]) -> str:
    """The job summary of `loader validate`, from its JSON document (machine.validate_document)."""
    counts = document["counts"]
    assert isinstance(counts, dict)
    verdict = "valid" if document["ok"] else "invalid"
    totals = f"{plural(counts['errors'], 'error')}, {plural(counts['warnings'], 'warning')}"
    lines = [f"## loader validate: {verdict}", "", totals, "",
             "| mapping | block | entity | source | rows read | records | errors | warnings |",
             "|---|---|---|---|--:|--:|--:|--:|"]
    blocks = document["blocks"]
    assert isinstance(blocks, list)
    for b in blocks:
        source = f"{b['source_file']} › {b['sheet']}" if b["sheet"] else b["source_file"]
        lines.append(f"| `{_cell(b['mapping_file'])}` | {_cell(b['name'])} | {b['entity']} | {_cell(source)} | "
                     f"{b['rows_read']} | {b['records']} | {b['errors']} | {b['warnings']} |")
    findings = document["findings"]
    assert isinstance(findings, list)
    if findings:
        lines += ["", "| | place | problem |", "|---|---|---|"]
        lines += [f"| {f['severity']} | {_cell(f['where'] or '')} | {_cell(f['message'])} |" for f in findings]
    return "\n".join(lines) + "\n"


def apply_summary(document: dict[str, object]) -> str:
    """The job summary of `loader apply`, from its JSON document (machine.apply_document)."""
    if document.get("nothing_to_apply"):
        return "## loader apply: nothing to apply\n\nThe service already matches the source.\n"
    outcomes = ("created", "updated", "unchanged", "skipped", "failed")
    verdict = "done" if document["ok"] else "not everything was applied"
    lines = [f"## loader apply to `{document['environment']}`: {verdict}", ""]
    if document.get("digest"):
        lines += [f"Plan digest `{document['digest']}`", ""]
    lines += ["| block | " + " | ".join(outcomes) + " |", "|---|" + "--:|" * len(outcomes)]
    blocks = document["blocks"]
    assert isinstance(blocks, list)
    for b in blocks:
        lines.append(f"| {_cell(b['name'])} | " + " | ".join(str(b[o]) for o in outcomes) + " |")
    records = document["records"]
    assert isinstance(records, list)
    problems = [r for r in records if r["outcome"] in ("failed", "skipped")]
    if problems:
        lines += ["", "| outcome | record | source | message |", "|---|---|---|---|"]
        lines += [f"| {r['outcome']} | {_cell(r['ref'])} | {_cell(r['source'])} | {_cell(_problem(r))} |"
                  for r in problems[:200]]
    return "\n".join(lines) + "\n"


def _problem(record: dict[str, object]) -> str:
    status = f"HTTP {record['status']}: " if record["status"] else ""
    return f"{status}{record['message'] or ''}"


def failed_annotations(document: dict[str, object], out: TextIO | None = None) -> None:
    """An error annotation per failed or skipped record of an apply document."""
    records = document.get("records", [])
    assert isinstance(records, list)
    for r in records:
        if r["outcome"] in ("failed", "skipped"):
            level = "error" if r["outcome"] == "failed" else "warning"
            text = f"{r['source']}: {r['ref']} {r['outcome']}: {_problem(r)}"
            print(f"::{level} title={_escape_property('loader apply')}::{_escape_data(text)}", file=out or sys.stdout)
