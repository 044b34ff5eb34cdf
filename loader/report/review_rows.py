"""The review workbook's rows: one per proposed change, in review order, with the digests `loader
decide` records (what the workbook is: loader.report.review_workbook)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from loader.history.decisions import CREATE
from loader.history.digests import Digester
from loader.plan.change_identity import create_value, personal_entities_of, record_identity
from loader.plan.digest import shown_digest
from loader.plan.masking import HIDDEN
from loader.plan.model import Action, BlockPlan, DuplicateHold, Plan, RecordPlan
from loader.report.references import ReferenceNames, target_text

SHEET = "Review"
INDEX_SHEET = "loader"
MARK = "loader review workbook"
FORMAT = 1
# What a reviewer reads first, then what they decide, then where the change comes from; columns are read
# back by their names (`loader.report.review_reading`), so a workbook of an earlier layout is read too.
HEADER = ("block", "record", "change", "field", "current value", "proposed value", "decision", "reason", "until",
          "rule", "place", "row id", "change digest")
DECISION_COLUMN = HEADER.index("decision") + 1
INDEX_HEADER = ("row id", "kind", "entity", "key", "field", "change digest")
INDEX_FIRST_ROW = 7  # the index's header row; its rows follow
CHOICES = ("apply", "skip", "defer")
CONFLICT_CHOICES = ("sheet", "platform")
DUPLICATE = "duplicate"  # the kind of a row held as a probable duplicate person
DUPLICATE_CHOICES = ("create", "same")
CHANGED = "changed"  # what a personal value proposed by the sheet shows
# The `change` column's words for each kind of row; a kind without words here shows its name
CHANGE_WORDS = {"conflict": "conflict", "update": "update", "status": "status step", "create": "new record",
                DUPLICATE: "probable duplicate"}
ALL_FIELDS = "(all fields)"  # the `field` a create's one row shows: its decision is about the whole record
MAX_WIDTH = 60
MIN_WIDTH = 8
MAX_TEXT = 500  # a create's values, cut with a marker


@dataclass(frozen=True)
class ReviewRow:
    """One proposed change as the workbook shows it; `key_token` and `digest` are "" when they
    could not be made (a personal entity and no history key)."""

    row_id: str
    kind: str  # "conflict", "update", "status", "create", "duplicate"
    block: str
    entity: str
    record: str  # the key as a reviewer reads it
    key_token: str
    field: str
    live: Any
    sheet: Any
    rule: str
    place: str
    digest: str
    label: str = ""  # the `change` column's words where the kind's are not enough: `renumber U001 → U1001`

    @property
    def choices(self) -> tuple[str, ...]:
        return choices_of(self.kind)

    def shown(self) -> dict[str, Any]:
        """The row's visible cells before the decision, by column name: one layout for every kind."""
        change = self.label or CHANGE_WORDS.get(self.kind, self.kind)
        return {"block": self.block, "record": self.record, "change": change,
                "field": ALL_FIELDS if self.kind in ("create", DUPLICATE) else self.field, "current value": self.live,
                "proposed value": self.sheet, "rule": self.rule, "place": self.place,
                "row id": self.row_id, "change digest": self.digest}


def choices_of(kind: str) -> tuple[str, ...]:
    """The decisions a row of `kind` offers."""
    return CONFLICT_CHOICES if kind == "conflict" else DUPLICATE_CHOICES if kind == DUPLICATE else CHOICES


def duplicate_digest(create_digest: str, live_token: str) -> str:
    """A held duplicate's change digest: what `create` names (the row's values) and what `same` names
    (the live record's key token; absent when it resembles an earlier row), one space between."""
    return f"{create_digest} {live_token}".strip() if create_digest else ""


def decided_value(kind: str, decision: str, digest: str) -> str:
    """What a decision of `kind` names (`Decision.refused`): the change digest, or for a held duplicate
    its part for `decision` ("" when there is none: `same` as an earlier row)."""
    if kind != DUPLICATE:
        return digest
    create, _, live = digest.partition(" ")
    return live if decision == "same" else create


def plan_tag(digest: str) -> str:
    """The prefix of the row ids of the plan of `digest`: 12 hex digits of it."""
    return digest.removeprefix("sha256:")[:12]


def review_rows(plan: Plan, digester: Digester | None = None, digest: str | None = None) -> list[ReviewRow]:
    """The workbook's rows, in review order, numbered; `digest` the plan's (`shown_digest`), when known."""
    digester = digester or Digester(personal_entities_of(plan))
    tag = plan_tag(digest or shown_digest(plan))
    names = ReferenceNames(plan)
    ordered = [r for rank in range(3) for b in plan.blocks for r in _rows(b, digester, rank, names)]
    return [_numbered(row, f"{tag}-{number:05d}") for number, row in enumerate(ordered, 1)]


def _numbered(row: ReviewRow, row_id: str) -> ReviewRow:
    return ReviewRow(row_id, *(getattr(row, name) for name in _FIELDS[1:]))


_FIELDS = tuple(ReviewRow.__dataclass_fields__)


def _rows(block: BlockPlan, digester: Digester, rank: int, names: ReferenceNames) -> Iterator[ReviewRow]:
    """The block's rows of one rank: 0 conflicts, 1 changes to existing records, 2 creates."""
    rules = {rule.field: f"{rule.place}  {rule.text}" for rule in block.field_rules}
    for record in block.records:
        if record.blocked or record.errors:
            continue
        row = _Row(block, record, digester, rules, names)
        if rank == 0:
            yield from row.conflicts()
        elif rank == 1 and record.action is Action.UPDATE:
            yield from row.updates()
        elif rank == 2 and record.action is Action.CREATE:
            yield row.create()
        elif rank == 2 and record.duplicate is not None:
            yield row.duplicate(record.duplicate)
        if (rank == 1 and record.action is not Action.CREATE) or (rank == 2 and record.action is Action.CREATE):
            yield from row.status_steps()


class _Row:
    """Makes one record's rows."""

    def __init__(self, block: BlockPlan, record: RecordPlan, digester: Digester, rules: dict[str, str],
                 names: ReferenceNames) -> None:
        self.block, self.record, self.rules, self.names = block, record, rules, names
        self.key_token, self.digests = record_identity(digester, record)
        self.record_text = " / ".join(str(part) for part in record.key)
        self.label = _label(block, record)

    def _row(self, kind: str, field: str, live: Any, sheet: Any, digested: Any, rule_field: str) -> ReviewRow:
        digest = "" if self.digests is None else self.digests.value(field, digested)
        rule = self.rules.get(rule_field, "")
        label = self.label if kind in ("update", "status") else ""
        return ReviewRow("", kind, self.block.name, self.record.entity, self.record_text, self.key_token, field,
                         self._shown(live), self._shown(sheet), rule, str(self.record.source), digest, label)

    def _shown(self, value: Any) -> Any:
        """A value as the row shows it: a reference by its target's key (`school SCI`)."""
        return target_text(self.names.shown(value)) or value

    def conflicts(self) -> Iterator[ReviewRow]:
        for conflict in self.record.conflicts:
            if conflict.pii:  # a personal field's conflict carries no values: nothing to digest
                row = self._row("conflict", conflict.field, _masked(conflict.live), CHANGED, None, conflict.field)
                yield replace(row, digest="")
            else:
                yield self._row("conflict", conflict.field, conflict.live, conflict.sheet, conflict.sheet,
                                conflict.field)

    def updates(self) -> Iterator[ReviewRow]:
        for change in self.record.changes:
            if change.field == "status" and self.record.status_path:
                continue  # a status goes along its path: one row per step (`status_steps`)
            shown_old, shown_new = (_masked(change.old), CHANGED) if change.pii else (change.old, change.new)
            yield self._row("update", change.field, shown_old, shown_new, change.new, change.field)

    def status_steps(self) -> Iterator[ReviewRow]:
        live = [c.old for c in self.record.changes if c.field == "status"]
        before: Any = live[0] if live and self.record.action is not Action.CREATE else None
        for step in self.record.status_path:
            yield self._row("status", "status", before, step, step, "status")
            before = step

    def duplicate(self, hold: DuplicateHold) -> ReviewRow:
        """Both records side by side, values shown: the workbook is written 0600 and never uploaded."""
        row = self._row(DUPLICATE, CREATE, _cut(_side(hold, 2)), _cut(_side(hold, 1)), None, "")
        return replace(row, rule=f"probable duplicate of {hold.resembles}: {', '.join(hold.agreed)} agreed, "
                                 f"names scored {hold.score:.2f}",
                       digest=duplicate_digest(hold.create_digest, hold.live_token))

    def create(self) -> ReviewRow:
        values = create_value(self.record)
        shown = "\n".join(f"{c.field}: {HIDDEN if c.pii and c.new is not None else _text(self._shown(c.new))}"
                           for c in self.record.changes)  # a line per field, in a wrapped cell
        return self._row("create", CREATE, None, _cut(shown), values, "")


def _label(block: BlockPlan, record: RecordPlan) -> str:
    """What a change to an existing record is, where an update's words are not enough: a renumber
    (`renumber U001 → U1001`), a retirement (`retire Old unit: dropped from the source`)."""
    if record.renamed_from is not None:
        return f"renumber {' / '.join(map(str, record.renamed_from))} → {' / '.join(map(str, record.key))}"
    if record.retiring:
        name = next((d.name for d in block.dropped if d.id == record.live_id and d.name), None)
        return f"retire{' ' + name if name else ''}: dropped from the source"
    return ""


def _side(hold: DuplicateHold, at: int) -> str:
    return "; ".join(f"{values[0]}: {_text(values[at])}" for values in hold.values)


def _masked(value: Any) -> Any:
    return None if value is None else HIDDEN


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"
