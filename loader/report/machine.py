"""`--format json`: one JSON document per command on stdout, described by schemas/output.schema.json.

Every document has `command`, `format` (this module's version), `ok` and `exit_code`; findings carry
their place as a structure (`mapping`: file, line, col; `cell`: file, sheet, cell or row) beside the
text form. Personal data: plan documents hold counts, record refs, actions, the *names* of
changed fields and the rule groups (each group's mapping line, how many records, a sample of their
refs; for creates how many give the field a value, leave it empty, distinct values), never values;
apply documents hold what results.json holds (keys and the service's messages), so treat a CI log
of them like results.json.
"""

from __future__ import annotations

import json
from typing import Any

from loader.apply.results import Results
from loader.places import CellRef, FilePlace, MappingPlace, Place
from loader.plan.digest import shown_digest
from loader.plan.model import Plan
from loader.report.finding_groups import ShownFinding, source_findings
from loader.report.results_json import results_to_dict
from loader.report.rules import RuleGroup, rule_groups
from loader.report.shown_findings import shown_findings
from loader.report.view import changed_records, counts, totals
from loader.source.sources import SourceSet

OUTPUT_FORMAT_VERSION = 2

def place_of(where: str | Place | None) -> dict[str, Any] | None:
    """A place as a structure: `mapping` (file, line, col), `cell` (file, sheet, cell, row), `record`
    (file, record, column, row: a record of a source that is not a sheet) or `file`.

    Text (an error that names its place only in words) has no structure: its `where` says it all.
    """
    if isinstance(where, MappingPlace):
        return {"kind": "mapping", "file": where.file, "line": where.line, "col": where.col}
    if isinstance(where, CellRef) and where.record is not None:
        return {"kind": "record", "file": where.file, "record": where.record, "column": where.cell, "row": where.row}
    if isinstance(where, CellRef):
        return {"kind": "cell", "file": where.file, "sheet": where.sheet, "cell": where.cell, "row": where.row}
    if isinstance(where, FilePlace):
        return {"kind": "file", "file": where.file}
    return None


def finding_json(finding: ShownFinding) -> dict[str, Any]:
    """One cause: its message (with the count and first cells when found on several rows), its place,
    `count` (the rows it is found on) and `cells` (the first three of them)."""
    return {
        "severity": finding.severity,
        "code": finding.code,
        "message": finding.text,
        "where": finding.place_text or None,
        "place": place_of(finding.where),
        "context": finding.context or None,
        "count": finding.count,
        "cells": list(finding.cells),
        "key": finding.key or None,
    }


def validate_document(sources: SourceSet, exit_code: int) -> dict[str, Any]:
    shown = source_findings(sources)
    findings = [finding_json(f) for f in shown]
    errors = sum(f.count for f in shown if f.severity == "error")
    warnings = sum(f.count for f in shown) - errors
    return {
        "command": "validate",
        "format": OUTPUT_FORMAT_VERSION,
        "ok": not errors,
        "exit_code": exit_code,
        "counts": {"errors": errors, "warnings": warnings},
        "blocks": [
            {
                "mapping_file": b.mapping_file,
                "name": b.block,
                "entity": b.entity,
                "source_file": b.source_file,
                "sheet": b.sheet,
                "rows_read": b.rows_read,
                "rows_filtered": b.rows_filtered,
                "records": len(b.records),
                "errors": sum(f.severity == "error" for f in b.findings),
                "warnings": sum(f.severity == "warning" for f in b.findings),
            }
            for b in sources.blocks
        ],
        "findings": findings,
    }


def _counts(plan_counts: Any) -> dict[str, int]:
    return {
        "create": plan_counts.create,
        "update": plan_counts.update,
        "unchanged": plan_counts.unchanged,
        "not_managed_here": plan_counts.not_in_source,
        "dropped": plan_counts.dropped,
        "warnings": plan_counts.warnings,
        "errors": plan_counts.errors,
    } | ({"renumber": plan_counts.renumber} if plan_counts.renumber else {}) | (
        {"kept": plan_counts.kept, "conflicts": plan_counts.conflicts}
         if plan_counts.kept or plan_counts.conflicts else {})


def _outcomes(record: Any) -> dict[str, list[str]]:
    """The fields of a record's kept platform edits and conflicts (names only), when it has any."""
    found = {}
    if record.kept:
        found["kept"] = [o.field for o in record.kept]
    if record.conflicts:
        found["conflicts"] = [o.field for o in record.conflicts]
    return found


def plan_document(plan: Plan, exit_code: int, *, command: str = "plan") -> dict[str, Any]:
    """The plan without any value: counts, findings, and which fields of which records change.
    `command`: `plan`, or `show` (a saved plan)."""
    return {
        "command": command,
        "format": OUTPUT_FORMAT_VERSION,
        "ok": not plan.has_errors,
        "exit_code": exit_code,
        "digest": shown_digest(plan),
        "environment": plan.environment,
        "env_name": plan.env_name,
        "api_version": plan.api_version,
        "has_changes": plan.has_changes,
        "totals": _counts(totals(plan)),
        "blocks": [
            {
                "name": b.name,
                "entity": b.entity,
                "source_file": b.source_file,
                "sheet": b.sheet,
                **_counts(counts(b)),
                "records": [
                    {
                        "ref": r.ref,
                        "action": r.action.value,
                        "fields": sorted({c.field for c in r.changes} or set(r.payload)),
                        "status_path": list(r.status_path),
                        "blocked": r.blocked,
                        "source": r.source,
                    } | _outcomes(r)
                    for r in changed_records(b)
                ],
                "rule_groups": [_group_json(g) for g in rule_groups(b)],
            }
            for b in plan.blocks
        ],
        "findings": [finding_json(f) for f in shown_findings(plan)],
    }


def _group_json(group: RuleGroup) -> dict[str, Any]:
    """A rule group without values: its mapping line, how many records, a sample of their refs."""
    profile = group.profile
    return {
        "kind": group.kind,
        "field": group.field,
        "place": group.place or None,
        "rule": group.text,
        "records": len(group.records),
        "sample": [r.ref for r in group.sample()],
        "profile": None if profile is None else {"with_value": profile.with_value, "empty": profile.empty,
                                                 "distinct": profile.distinct},
    }


def apply_document(results: Results | None, exit_code: int, plan: Plan | None = None) -> dict[str, Any]:
    """Outcomes per record (as results.json), or an empty apply when nothing needed doing."""
    body: dict[str, Any] = {"command": "apply", "format": OUTPUT_FORMAT_VERSION, "exit_code": exit_code}
    if plan is not None:
        body["digest"] = shown_digest(plan)
    if results is None:
        return {**body, "ok": exit_code == 0, "nothing_to_apply": True, "totals": {}, "blocks": [], "records": []}
    data = results_to_dict(results)
    data.pop("format")
    return {**body, **data, "ok": results.ok and exit_code == 0, "nothing_to_apply": False}


def error_document(
    command: str, message: str, where: str | Place | None, hint: str | None, exit_code: int
) -> dict[str, Any]:
    """A command that stopped with an error (bad input, a refusal) before it had anything else to say."""
    return {
        "command": command,
        "format": OUTPUT_FORMAT_VERSION,
        "ok": False,
        "exit_code": exit_code,
        "error": {"message": message, "where": None if where is None else str(where), "place": place_of(where),
                  "hint": hint},
    }


def history_document(environment: str, folder: str, started: bool, head: dict[str, Any],
                     applies: list[dict[str, Any]]) -> dict[str, Any]:
    """`loader history`: the applies of an environment, newest first (`ApplyRow.as_json`)."""
    return {"command": "history", "format": OUTPUT_FORMAT_VERSION, "ok": True, "exit_code": 0,
            "environment": environment, "folder": folder, "started": started, "head": head, "applies": applies}


def history_record_document(environment: str, entity: str, key: dict[str, str], personal: bool,
                            in_snapshot: bool, loads: list[dict[str, Any]], former_keys: list[str] | None = None,
                            edits: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """`loader history --entity E --key ...`: one record's loads, field by field (values only of a
    record with no personal field, as the text shows them), the keys it had before and who first
    changed each field in the platform."""
    return {"command": "history", "format": OUTPUT_FORMAT_VERSION, "ok": True, "exit_code": 0,
            "environment": environment, "entity": entity, "key": key, "personal": personal,
            "in_snapshot": in_snapshot, "loads": loads, "former_keys": former_keys or [], "edits": edits or []}


def pull_document(wrote: str, entities: list[tuple[str, int]]) -> dict[str, Any]:
    """`loader pull`: the workbook written and how many records of each entity it holds (no values:
    they are in the workbook)."""
    return {"command": "pull", "format": OUTPUT_FORMAT_VERSION, "ok": True, "exit_code": 0, "wrote": wrote,
            "entities": [{"entity": name, "records": count} for name, count in entities]}


def dumps(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False, default=str)

