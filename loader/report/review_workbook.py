"""The review workbook `loader plan --review review.xlsx` writes: one row per proposed change, with a
`decision` a reviewer picks (apply / skip / defer; for a conflict sheet / platform) and a `reason`;
`loader decide review.xlsx` records the skips and defers (loader.report.review_reading reads it back).

A registrar uses it without a briefing: its first sheet, "How to review", says what a row is and how
to decide; the `Review` sheet has the columns a reviewer reads (block, record, change, field,
current value, proposed value), then the decision, reason and until columns within a screen's width
of the left edge, then the rule and place the change comes from; it prints landscape, one page wide.

Rows: an update is one row per field, a status move one row per step, a create one row per record
(one decision; its values a line each in a wrapped cell), a conflict (`RecordPlan.conflicts`) one
row per field; blocked records propose nothing and have no row. Every kind of row has the same
columns (`ReviewRow.shown`). Conflicts come first, then changes to existing records, then creates,
as in every report.

Each row carries, in hidden columns, its row id (the plan's tag, then its number) and its change
digest: the history's digest of the value the sheet proposes, bound to entity, key and field (keyed
for an entity with personal fields, so the workbook and decisions.yaml reveal no person). A hidden
sheet `loader` holds the workbook's identity (plan digest, environment) and the index of its rows
(row id, kind, entity, key token, field, digest), which `decide` takes as the truth: a reviewer may
sort, filter, edit or delete rows, and a row whose id or digest does not match the index (pasted
from another plan's workbook, or edited) is refused by name. So `decide` needs no secret and no
plan: each row says which change it is about.

Without the history's digester (`digester=None`), digests are plain and an entity with a personal
change gets none (no key to make them with): its rows can be applied but not skipped or deferred.
Neither can a personal field's conflict, whose values the plan does not hold.

Personal values are masked (`changed`), every cell is neutralised and escaped (`safe_cells`), and
the file is mode 0600 from its first byte.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

from loader.history.digests import Digester
from loader.plan.digest import shown_digest
from loader.plan.model import Plan
from loader.report.review_rows import review_rows


def _cell(value: Any) -> Any:
    """A value as a cell shows it: text, numbers and dates as they are, anything else as its text."""
    if value is None or isinstance(value, (str, int, float, date)):
        return value
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def write_review_workbook(plan: Plan, path: Path, digester: Digester | None = None) -> int:
    """Write the review workbook of `plan` to `path` (mode 0600); returns how many rows it has."""
    from loader.files.safe_write import replacing
    from loader.report.review_sheets import build_review_book

    digest = shown_digest(plan)
    rows = review_rows(plan, digester, digest)
    book = build_review_book(plan, digest, rows, [{k: _cell(v) for k, v in row.shown().items()} for row in rows])
    with replacing(path) as handle:  # 0600 before the first byte: live values of people's records
        book.save(handle)
    return len(rows)


