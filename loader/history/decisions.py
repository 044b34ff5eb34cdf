"""Reviewers' decisions about single changes: `decisions.yaml`, beside loader.yaml, one per project.

`loader decide review.xlsx` records the review workbook's skip and defer rows here (and a conflict
decided for the sheet); the planner asks `match_decisions` whether a decision still holds for a
change it is about to propose. The file belongs in git, so it reveals no personal value: a record is
named by its entity and key token (the key's text, or for an entity with personal fields the keyed
digest the history uses), a refused value by its digest (the history's W of the value the sheet
proposed), never by the value.

Each entry names the environment of the plan it was decided on (the loader.yaml name): a change
skipped on Test is still proposed on Production. An entry is identified by (environment, entity,
key, field); deciding the same change again replaces its entry. `field` is the field's name,
`status` for a status step, or `CREATE` (the record as a whole) for a create.

    skip    holds while the sheet proposes the refused value (same digest); proposed again when it differs
    defer   holds until its `until` date: on that date the change is proposed again
    sheet   a conflict decided for the sheet: its value is written over the platform edit while the
            sheet proposes that value (a conflict decided for the platform is recorded as a skip)
    create  a row held as a probable duplicate (field CREATE) is a new person: created while the row
            proposes the values decided on (`refused`: their digest)
    same    a row held as a probable duplicate (field CREATE) is the live person whose key token
            `refused` holds: the row's key is recorded on that record's history line, nothing written

The file is written deterministically so that parallel branches merge cleanly: entries sorted by
entity, key, field (then environment), one block of lines each with its fields in a fixed order,
every value a double-quoted scalar (JSON's escapes, which YAML shares), a blank line between blocks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import Any

from loader.files.safe_write import write_text
from loader.history.errors import HistoryError
from loader.yaml_files import YamlSyntaxError, read_yaml_document

FILE_NAME = "decisions.yaml"
CREATE = "CREATE"  # the field of a decision about a whole new record
VERSION = 1
_HEADER = (
    "# Review decisions, recorded by `loader decide review.xlsx` (kept in git; no personal value is held).\n"
    "# A skip holds while the sheet proposes the refused value; a defer until its date. Delete an entry\n"
    "# to undo it. Sorted by entity, key, field: keep it that way so parallel branches merge cleanly.\n"
)
_TOP_LEVEL = ("version", "decisions")
_FIELDS = ("entity", "key", "field", "environment", "decision", "refused", "reason", "by", "date", "until")


class Kind(StrEnum):
    SKIP = "skip"
    DEFER = "defer"
    SHEET = "sheet"
    NEW = "create"  # a row held as a probable duplicate is a new person (`loader.plan.duplicates_pass`)
    SAME = "same"  # a row held as a probable duplicate is the live person whose key token `refused` holds


@dataclass(frozen=True)
class Decision:
    """One reviewer's decision about one change (see the module docstring)."""

    environment: str
    entity: str
    key: str  # the key token: the key's text, or a keyed digest for an entity with personal fields
    field: str  # a field name, "status" for a status step, CREATE for a whole new record
    refused: str  # the digest of the value the decision is about (the sheet's, as the plan proposed it)
    decision: Kind
    reason: str
    by: str
    decided_on: date  # `date:` in the file
    until: date | None = None  # defer only

    @property
    def identity(self) -> tuple[str, str, str, str]:
        return (self.environment, self.entity, self.key, self.field)

    @property
    def digest_part(self) -> tuple[str, ...]:
        """What a plan's digest covers of a decision it matched: all of it but its reason, so a reason
        reworded does not invalidate a reviewed plan, while another decision does."""
        until = "" if self.until is None else self.until.isoformat()
        return (*self.identity, self.refused, self.decision.value, self.by, self.decided_on.isoformat(), until)

    def holds(self, sheet_digest: str, today: date) -> bool:
        """Whether the decision still holds for a change proposing the value of digest `sheet_digest`."""
        if self.decision is Kind.DEFER:
            return self.until is not None and today < self.until
        if self.decision in (Kind.NEW, Kind.SAME):
            return False  # about a held duplicate, not a change (`loader.plan.duplicates_pass`)
        return sheet_digest == self.refused


@dataclass(frozen=True)
class ProposedChange:
    """A change the planner is about to propose, as decisions name it (`match_decisions`)."""

    environment: str
    entity: str
    key: str  # key token
    field: str
    digest: str  # digest of the value the sheet proposes (the history's W of it)

    @property
    def identity(self) -> tuple[str, str, str, str]:
        return (self.environment, self.entity, self.key, self.field)


@dataclass(frozen=True)
class Decisions:
    """The decisions of a project, in file order (`sort_key`); look one up with `get`."""

    entries: tuple[Decision, ...] = ()

    def get(self, identity: tuple[str, str, str, str]) -> Decision | None:
        return self._index().get(identity)

    def _index(self) -> dict[tuple[str, str, str, str], Decision]:
        cached: dict[tuple[str, str, str, str], Decision] | None = self.__dict__.get("_by_identity")
        if cached is None:
            cached = {d.identity: d for d in self.entries}
            object.__setattr__(self, "_by_identity", cached)  # a cache of the frozen entries
        return cached

    def with_decisions(self, new: Iterable[Decision]) -> Decisions:
        """These decisions with `new` added, each replacing an entry about the same change."""
        merged = {d.identity: d for d in self.entries}
        merged.update((d.identity, d) for d in new)
        return Decisions(tuple(sorted(merged.values(), key=sort_key)))


def sort_key(decision: Decision) -> tuple[str, str, str, str]:
    return (decision.entity, decision.key, decision.field, decision.environment)


def match_decisions(decisions: Decisions, change: ProposedChange, today: date) -> Decision | None:
    """The decision that holds `change` back (or, `sheet`, lets it win a conflict), or None: a skip
    while the sheet proposes the refused value, a defer before its date. `today` is given, never read
    from a clock, so a plan is a function of its inputs."""
    decision = decisions.get(change.identity)
    if decision is None or not decision.holds(change.digest, today):
        return None
    return decision


def decisions_path(project_dir: Path) -> Path:
    """Where a project keeps its decisions: beside loader.yaml."""
    return project_dir / FILE_NAME


def read_decisions(path: Path) -> Decisions:
    """The decisions in `path` (none when there is no such file). Read as every YAML file is
    (loader.yaml_files: a regular file, bounded in size, depth and values); an unknown top-level
    key and one change decided twice are errors."""
    try:
        document = read_yaml_document(path, str(path))
    except FileNotFoundError:
        return Decisions()
    except OSError as error:
        raise HistoryError(f"cannot read the decisions: {error.strerror or error}", where=str(path)) from None
    except YamlSyntaxError as error:
        raise HistoryError(error.message, where=str(error.place),
                           hint="resolve the merge conflict or restore the file from git") from None
    if document.problems:
        place, message = document.problems[0]
        raise HistoryError(message, where=str(place), hint="write each decision's fields once")
    data = document.data
    if data is None:
        return Decisions()
    if not isinstance(data, Mapping) or not isinstance(data.get("decisions", []), list):
        raise HistoryError("expected `version: 1` and a list `decisions:`", where=str(path))
    unknown = sorted(str(k) for k in data if k not in _TOP_LEVEL)
    if unknown:
        raise HistoryError(f"unknown key {unknown[0]!r}", where=str(document.place((unknown[0],), key=True)),
                           hint="the file holds `version:` and `decisions:` only")
    if data.get("version", VERSION) != VERSION:
        raise HistoryError(f"version {data.get('version')!r} is not one this loader reads ({VERSION})",
                           where=str(path), hint="upgrade the loader")
    entries = [_entry(item, number, path) for number, item in enumerate(data.get("decisions") or [], 1)]
    _refuse_twice_decided(entries, path)
    return Decisions(tuple(sorted(entries, key=sort_key)))


def _refuse_twice_decided(entries: list[Decision], path: Path) -> None:
    first: dict[tuple[str, str, str, str], int] = {}
    for number, entry in enumerate(entries, 1):
        earlier = first.setdefault(entry.identity, number)
        if earlier != number:
            raise HistoryError(
                f"decisions {earlier} and {number} decide one change ({entry.entity} {entry.key} › {entry.field} "
                f"on {entry.environment})", where=str(path), hint="keep one of them and delete the other")


def _entry(item: Any, number: int, path: Path) -> Decision:
    where = f"{path} › decision {number}"
    if not isinstance(item, Mapping):
        raise HistoryError("each decision is a mapping of entity, key, field, ...", where=where)
    unknown = sorted(str(k) for k in item if k not in _FIELDS)
    if unknown:
        raise HistoryError(f"unknown field {unknown[0]!r}", where=where, hint=f"known: {', '.join(_FIELDS)}")
    try:
        kind = Kind(str(item.get("decision")))
        until = _date(item.get("until"), "until") if item.get("until") is not None else None
        if kind is Kind.DEFER and until is None:
            raise ValueError("a defer needs `until: YYYY-MM-DD`")
        return Decision(
            environment=_text(item, "environment"), entity=_text(item, "entity"), key=_text(item, "key"),
            field=_text(item, "field"), refused=_text(item, "refused"), decision=kind,
            reason=str(item.get("reason") or ""), by=str(item.get("by") or ""),
            decided_on=_date(item.get("date"), "date"), until=until,
        )
    except ValueError as error:
        raise HistoryError(str(error), where=where,
                           hint="decisions: skip, defer, sheet, create or same; dates as YYYY-MM-DD") from None


def _text(item: Mapping[str, Any], name: str) -> str:
    value = item.get(name)
    if not isinstance(value, str) or (not value and name != "refused"):
        raise ValueError(f"`{name}` must be text")
    return value


def _date(value: Any, name: str) -> date:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"`{name}`: {value!r} is not a date (YYYY-MM-DD)") from None


def decisions_text(decisions: Decisions) -> str:
    """The file's text: the same decisions always give the same bytes (see the module docstring)."""
    blocks = [_block(d) for d in sorted(decisions.entries, key=sort_key)]
    body = "\n".join(blocks) if blocks else "decisions: []\n"
    return _HEADER + f"version: {VERSION}\n" + ("decisions:\n" + body if blocks else body)


def _block(decision: Decision) -> str:
    values: dict[str, str | None] = {
        "entity": decision.entity, "key": decision.key, "field": decision.field,
        "environment": decision.environment, "decision": decision.decision.value,
        "refused": decision.refused, "reason": decision.reason, "by": decision.by,
        "date": decision.decided_on.isoformat(),
        "until": None if decision.until is None else decision.until.isoformat(),
    }
    lines = [f"{name}: {_quoted(value)}" for name, value in values.items() if value is not None]
    return "  - " + "\n    ".join(lines) + "\n"


# What a YAML double-quoted scalar must not hold as it is: characters outside YAML's printable set,
# and the line breaks YAML would fold (NEL, LS, PS). JSON escapes the C0 controls, quote and backslash.
_NOT_YAML_PRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def _quoted(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)
    return _NOT_YAML_PRINTABLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", quoted)


def write_decisions(path: Path, decisions: Decisions) -> None:
    """Write the decisions file through a fresh temporary file beside it (loader.files.safe_write): a
    crash leaves the old one, a symlink planted beside it is never written through."""
    write_text(path, decisions_text(decisions), private=False)  # kept in git: the umask's mode
