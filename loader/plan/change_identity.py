"""How a proposed change is named for reviewers' decisions: the record's key token and the digest of
the value the sheet proposes (the history's W of it). The review workbook's rows
(`loader.report.review_rows`) and the planner's decisions pass (`loader.plan.decisions_pass`) both
name changes this way, so a decision recorded from a row matches the change the next plan proposes.

A record the plan renumbers is named by its old key (the key a revert of the renumber gives it
back, and under which the decision to skip the renumber holds). A changed field is named by its
field and the digest of its new value; a status step by `status`
and the digest of that step; a create by `CREATE` and the digest of `{field: new}` over its changes.
"""

from __future__ import annotations

from typing import Any

from loader.history.digests import Digester, RecordDigests
from loader.plan.model import Plan, RecordPlan


def record_identity(digester: Digester, record: RecordPlan) -> tuple[str, RecordDigests | None]:
    """The record's key token and its digests; ("", None) for an entity with personal fields when the
    digester has no key (its changes cannot be named without revealing a person)."""
    if digester.is_personal(record.entity) and digester.data_key is None:
        return "", None
    key = record.renamed_from or record.key  # a renumber is named by the key it has until it is done
    return digester.key_token(record.entity, key), digester.record(record.entity, key)


def create_value(record: RecordPlan) -> dict[str, Any]:
    """What a create's digest is taken of: its new values by field."""
    return {c.field: c.new for c in record.changes}


def personal_entities_of(plan: Plan) -> frozenset[str]:
    """The entities of the plan with a personal field changed (a digester's `personal` without the mappings)."""
    return frozenset(r.entity for r in plan.records() for c in r.changes if c.pii)
