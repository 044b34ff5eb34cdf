"""One finding per cause: the findings of one cause, as every output shows them (contract section 7).

One mistake in a mapping line (a key that is not unique, a type that does not fit a column) makes a
finding on every row it touches. Shown, they are one: at the mapping line (else the sheet), with how
many rows and the first three cells, each with its record's key and what is particular to it
(`D2 (COMP1001): 'ten'`). Findings of one block are of one cause when they have the same severity,
code, rule and cause (`Finding.cause`, else the message). A cause found once is shown as it was.

Grouping is of what is shown only: each record a finding touches is still blocked by it, and
plan.json, the HTML page's records and results.xlsx still name each row.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loader.findings import Finding
from loader.places import CellRef, Place
from loader.words import plural

if TYPE_CHECKING:
    from loader.source.sources import SourceSet

EXAMPLES = 3  # cells shown of a cause found on many rows
DUPLICATE_KEY = "duplicate-key"


@dataclass(frozen=True)
class ShownFinding:
    """A cause as reports show it: `count` findings, `cells` the first EXAMPLES of them.

    `where` is the mapping line of a cause found on several rows (else their sheet, or the one
    finding's place); `keys`, of a key that is not unique, how many keys (on `rows` rows).
    """

    severity: str
    code: str
    message: str
    where: Place | None
    context: str
    count: int = 1
    cells: tuple[str, ...] = ()
    key: str = ""  # the record's key, of a cause found once
    keys: int = 0
    rows: int = 0
    sheet: str = ""  # the sheet of the cells, when `where` is the mapping line
    noun: str = "rows"  # what the count counts: "records" for findings the plan made about records

    @property
    def text(self) -> str:
        """The message, and for a cause found on several rows how many and the first cells."""
        if self.count == 1:
            return self.message
        if self.code == DUPLICATE_KEY and self.keys:
            many = f"{plural(self.keys, 'key')} on {plural(self.rows, 'row')}"
        else:
            many = f"{self.count:,} {self.noun}"
        of = f" of {self.sheet}" if self.sheet else ""
        return f"{self.message} — {many}{of}, first: {'; '.join(self.cells)}"

    @property
    def place_text(self) -> str:
        """The place with the record's key beside it: `curriculum.xlsx › Subjects › D2 (COMP1001)`."""
        where = "" if self.where is None else str(self.where)
        return f"{where} ({self.key})" if self.key and where else where


def group_findings(items: Iterable[tuple[str, str, Finding]]) -> list[ShownFinding]:
    """One ShownFinding per cause, in the order each cause is first found.

    `items` are (context, block, finding): `context` names what the finding belongs to (a block, a
    record's ref), `block` the block whose findings may share a cause ("" for none).
    """
    causes: dict[tuple[object, ...], tuple[str, list[tuple[str, Finding]]]] = {}
    for n, (context, block, finding) in enumerate(items):
        cause = finding.cause or finding.message
        if isinstance(finding.where, CellRef) or finding.rule is not None:
            group: tuple[object, ...] = (block, finding.severity, finding.code, finding.rule, cause)
        else:
            group = (n,)  # a finding about a whole file or mapping is a cause of its own
        causes.setdefault(group, (block, []))[1].append((context, finding))
    return [_shown(found, block) for block, found in causes.values()]


def _shown(found: list[tuple[str, Finding]], block: str) -> ShownFinding:
    context, first = found[0]
    if len(found) == 1:
        return ShownFinding(first.severity, first.code, first.message, first.where, context, key=first.key)
    cause = first.cause or first.message
    where = first.rule or _sheet(first.where)
    sheet = str(_sheet(first.where)) if first.rule is not None and isinstance(first.where, CellRef) else ""
    cells = tuple(_cell(f, cause) for _, f in found[:EXAMPLES])
    keys = len({f.key for _, f in found}) if first.code == DUPLICATE_KEY else 0
    # A key's first row gives no duplicate-key finding (each later row is compared with it).
    rows = len(found) + keys
    of_records = len({c for c, _ in found}) > 1  # findings about records (each its ref), not rows of a block
    return ShownFinding(first.severity, first.code, cause, where, block if of_records else context, len(found),
                        cells, keys=keys, rows=rows, sheet=sheet, noun="records" if of_records else "rows")


def _sheet(where: Place | None) -> Place | None:
    """The sheet of a cell (its file and sheet), for a cause found on many of its cells."""
    if isinstance(where, CellRef):
        return CellRef(where.file, where.sheet)
    return where


def _cell(finding: Finding, cause: str) -> str:
    """`D2 (COMP1001): 'ten'`: the cell, the record's key, what the finding says beyond its cause."""
    where = finding.where
    if isinstance(where, CellRef):
        at = where.cell or (f"row {where.row}" if where.row is not None else str(where))
        at += f" ({where.repeat})" if where.repeat else ""
    else:
        at = "" if where is None else str(where)
    if finding.key:
        at = f"{at} ({finding.key})" if at else finding.key
    detail = _beyond(finding.message, cause)
    return f"{at}: {detail}" if detail and at else at or detail


def _beyond(message: str, cause: str) -> str:
    """What `message` says beyond `cause`: `'ten'` of "expected a whole number, got 'ten'"."""
    if message == cause or not message.startswith(cause):
        return ""
    rest = message[len(cause):].lstrip(" ,;:")
    return rest.removeprefix("got ").strip()


def source_findings(sources: SourceSet) -> list[ShownFinding]:
    """What `loader validate` shows: the findings of the mapping files, then of each block, one per cause."""
    items = [("", "", f) for f in sources.findings]
    items += [(b.block, f"{b.mapping_file}\0{b.block}", f) for b in sources.blocks for f in b.findings]
    return group_findings(items)
