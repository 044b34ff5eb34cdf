"""The plan as values: what will change, per block and per record.

`loader.plan.diff` computes a Plan (pure); reports render it; `loader.apply` executes it.
Its plan.json form is `loader.plan.plan_dict`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from loader.findings import Finding
from loader.places import CellRef

HELD = "probable-duplicate"  # the finding's code of a create held as a probable duplicate person


class Action(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class PendingId:
    """Stands in a payload for the id of a record this plan creates (`RecordPlan.ref`).

    The executor replaces it with the real id once that record exists.
    In plan.json it is written as {"$pending": "<ref>"}.
    """

    ref: str


@dataclass(frozen=True, slots=True)
class FieldChange:
    field: str  # "name", or "custom_attributes.Faculty"
    old: Any
    new: Any
    pii: bool = False


@dataclass(frozen=True, slots=True)
class FieldOutcome:
    """One managed field the platform changed since the loader last wrote it (section 10's three-way
    compare): a kept platform edit (not written) or a conflict (held). `last_loaded` is the value the
    loader last wrote where the plan knows it (the sheet's, when it still equals W), else None;
    personal fields carry no values (`pii`). `changed_by`/`changed_at` are the live record's
    `metadata.updated` (user id, time); `editor` names that user for reports (a name, from the
    service's users: `report: {editors: name}`), `editor_email` their e-mail address (`editors:
    email`; shown only in files written 0600, never in plan.json); `seen` says an earlier plan's
    apply already showed it (same values), so reports count it rather than list it again."""

    field: str
    sheet: Any = None
    live: Any = None
    last_loaded: Any = None
    changed_by: str | None = None
    changed_at: int | None = None
    pii: bool = False
    seen: bool = False
    editor: str | None = None
    editor_email: str | None = None


@dataclass(frozen=True, slots=True)
class DuplicateHold:
    """Why a create is held as a probable duplicate person (`loader.plan.duplicates_pass`): whom it
    resembles (a live key, or an earlier row), the fields that agreed and the name score; for the
    0600 review workbook only, both records' values side by side (`values`: field, row's, other's)
    and what a decision names (`create_digest`, `live_token`; "" where they cannot be made)."""

    resembles: str  # "live applicant L000", or "an earlier row (… › row 7, key N0005)"
    agreed: tuple[str, ...]
    score: float
    values: tuple[tuple[str, Any, Any], ...] = ()
    create_digest: str = ""
    live_token: str = ""


@dataclass(frozen=True)
class SourceReading:
    """How a block's rows were read, so that results.xlsx copies them exactly as the plan did."""

    header_row: int = 1
    encoding: str | None = None  # CSV only; None: UTF-8 with or without BOM
    delimiter: str | None = None  # CSV only; None: sniffed


@dataclass(slots=True)
class RecordPlan:
    """One desired record and what will be done to it. Treat it as read-only: passes make a new one
    (`dataclasses.replace`). Not frozen, as a plan makes one or two per record and a frozen class
    sets each of its fields through `object.__setattr__`.

    `ref` is stable within the plan ("<block>/<key values joined by '/'>").
    `payload` is the body of the create or update (PendingId where an id is not known yet);
    `status_path` the statuses to set afterwards, one update each, in order.
    `depends_on` the refs of records this plan creates that this one needs first.
    `blocked` is true when this record or something it depends on has errors.
    """

    ref: str
    block: str
    entity: str
    key: tuple[Any, ...]
    action: Action
    payload: Mapping[str, Any]
    source: CellRef  # the row's place, shown as "curriculum.xlsx › Courses › row 7"
    live_id: str | None = None
    live_updated_time: int | None = None
    changes: tuple[FieldChange, ...] = ()
    status_path: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    blocked: bool = False
    row: int | None = None  # 1-based source row, for the results workbook
    refers_to: tuple[str, ...] = ()  # records of this plan it refers to by their live id (stale checks)
    also_rows: tuple[tuple[str, int], ...] = ()  # (block, row) of the other source rows merged into it
    history_line: str | None = None  # `history.lines.line_digest` of the line it was planned against; None: none
    kept: tuple[FieldOutcome, ...] = ()  # kept platform edits: not written
    conflicts: tuple[FieldOutcome, ...] = ()  # conflicts: that field held, the rest goes ahead
    confirmed: tuple[str, ...] = ()  # fields found equal to the sheet whose W moves to live
    # W once carried out, per field the plan computed it for (written, confirmed; a set's element
    # digests as a sorted tuple): apply journals these as they are (`FieldWrite.written`)
    written_after: tuple[tuple[str, str | tuple[str, ...]], ...] = ()
    # the live values of the fields confirmed (none of a personal field): the journal's value after
    confirmed_values: tuple[tuple[str, Any], ...] = ()
    # the key the record had before this plan renumbers it (`renamed:`): an update of its key field on
    # the same live id; the history line moves from that key to `key`
    renamed_from: tuple[Any, ...] | None = None
    retiring: bool = False  # a retire change: a record dropped from the source, set as `on_dropped:` says
    duplicate: DuplicateHold | None = None  # held as a probable duplicate person: why (not in plan.json)

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "warning")

    @property
    def has_changes(self) -> bool:
        return self.action is not Action.UNCHANGED or bool(self.status_path)



@dataclass(frozen=True)
class NotInSource:
    """A live record no row of the source names: the service has no delete, so a person retires it."""

    key: tuple[Any, ...]  # its values of the block's key fields
    id: str


@dataclass(frozen=True)
class DroppedRecord:
    """A live record this block loaded in an earlier cycle that its sheet no longer names: kept (listed),
    retired (`on_dropped: {set: …}`: a retire change of the same id) or released."""

    key: tuple[Any, ...]
    id: str
    last_loaded: str | None = None  # when an apply last loaded it (ISO time)
    seen: bool = False  # an earlier plan's apply already showed it: reports count it, not list it
    name: str | None = None  # its name as live, for reports (None for an entity with personal fields)


@dataclass(frozen=True)
class FieldRule:
    """The mapping line that sets one field of a block; reports group changes by it (not in the digest)."""

    field: str  # "name", or "custom_attributes.Faculty"
    place: str  # "mappings/units.yaml:31"
    text: str  # "name ← column 'Unit Name'"


@dataclass(frozen=True)
class BlockedRow:
    """A source row that errors kept from becoming a record: planned neither way, and not "not in source".

    `key` where its key cells could be read; `live_id` the live record with that key, if any.
    """

    source: CellRef  # the row's place, shown as "curriculum.xlsx › Courses › row 7"
    row: int | None
    key: tuple[Any, ...] | None
    live_id: str | None
    errors: tuple[Finding, ...]


@dataclass(frozen=True)
class BlockPlan:
    name: str
    entity: str
    source_file: str
    sheet: str | None
    records: tuple[RecordPlan, ...]
    not_in_source_records: tuple[NotInSource, ...] = ()
    findings: tuple[Finding, ...] = ()  # block-level findings (not tied to one record)
    key_fields: tuple[str, ...] = ()  # the mapping block's `key:`; how apply looks a record up by name
    blocked_rows: tuple[BlockedRow, ...] = ()
    reading: SourceReading = SourceReading()  # how its source was read (results.xlsx reads it again)
    field_rules: tuple[FieldRule, ...] = ()  # the mapping line of each field it sets
    dropped: tuple[DroppedRecord, ...] = ()  # records it loaded before that its sheet no longer names
    mapping_file: str | None = None  # the mapping file of the block, as the project names it (history owner)
    released: tuple[DroppedRecord, ...] = ()  # dropped records it stops managing (`on_dropped: release`)
    formerly: tuple[str, str] | None = None  # (file, block) it was named before: the apply keeps the rename

    def count(self, action: Action) -> int:
        return sum(1 for r in self.records if r.action is action and not r.errors)

    @property
    def not_in_source(self) -> int:
        return len(self.not_in_source_records)

    @property
    def blocked(self) -> int:
        """Records blocked by errors (their own or a dependency's), and rows left out by errors."""
        return sum(1 for r in self.records if r.blocked or (r.findings and r.errors)) + len(self.blocked_rows)


@dataclass(frozen=True)
class Plan:
    environment: str
    api_version: str | None
    base_url: str
    fingerprints: Mapping[str, str]  # input path -> "sha256:<hex>"
    blocks: tuple[BlockPlan, ...]
    findings: tuple[Finding, ...] = ()  # plan-level findings
    created_at: str | None = None  # ISO time; the one non-deterministic header field
    env_name: str = "sandbox"  # the loader.yaml environment name it was made for
    # plan.json keeps the four below under `extra` (`extra_of`, `extra_fields`); the digest covers them
    profile_fingerprint: str | None = None  # the entity profile planned with: apply refuses it under another
    history_state: str | None = None  # `History.state()` of the history compared against; None: two-way
    decisions: tuple[tuple[str, ...], ...] = ()  # the decisions matched (`Decision.digest_part`), sorted
    revert_of: str | None = None  # a revert plan (`loader revert`): the id of the apply it undoes
    digest: str | None = None  # the digest recorded in plan.json (its PII is masked, so it cannot be recomputed)

    def records(self) -> tuple[RecordPlan, ...]:
        return tuple(r for b in self.blocks for r in b.records)

    @property
    def has_errors(self) -> bool:
        return bool(self.errors())

    def errors(self) -> tuple[Finding, ...]:
        """Every error of the plan: plan-level, block-level and per record."""
        found = [f for f in self.findings if f.severity == "error"]
        found += [f for b in self.blocks for f in b.findings if f.severity == "error"]
        found += [f for r in self.records() for f in r.errors]
        return tuple(found)

    @property
    def has_changes(self) -> bool:
        return any(r.has_changes and not r.blocked for r in self.records())

    @property
    def held_duplicates(self) -> int:
        """Creates held as probable duplicates of people: changes waiting for a decision."""
        return sum(1 for r in self.records() for f in r.findings if f.code == HELD)


# The keys of plan.json's `extra` object, which holds the fields of a Plan's head above that older
# plan files may lack; each is written only when set, so a plan without them has the `extra` it had.
EXTRA_PROFILE, EXTRA_HISTORY, EXTRA_DECISIONS, EXTRA_REVERT_OF = "profile", "history", "decisions", "revert_of"


def extra_of(plan: Plan) -> dict[str, Any]:
    """The `extra` object of `plan` in plan.json and in its digest: its fields that are set."""
    extra: dict[str, Any] = {}
    if plan.profile_fingerprint is not None:
        extra[EXTRA_PROFILE] = plan.profile_fingerprint
    if plan.history_state is not None:
        extra[EXTRA_HISTORY] = plan.history_state
    if plan.decisions:
        extra[EXTRA_DECISIONS] = [list(decision) for decision in plan.decisions]
    if plan.revert_of is not None:
        extra[EXTRA_REVERT_OF] = plan.revert_of
    return extra


def extra_fields(extra: Mapping[str, Any]) -> dict[str, Any]:
    """The Plan fields of plan.json's `extra` object (`extra_of`'s inverse), by name."""
    return {
        "profile_fingerprint": extra.get(EXTRA_PROFILE),
        "history_state": extra.get(EXTRA_HISTORY),
        "decisions": tuple(tuple(decision) for decision in extra.get(EXTRA_DECISIONS, ())),
        "revert_of": extra.get(EXTRA_REVERT_OF),
    }
