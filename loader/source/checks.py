"""A block's `checks:` judged on the records it built (after `where`, after its rows merged).

A failing check is reported as findings of the block, so every output (terminal, Markdown, HTML,
JSON, GitHub) shows it as it shows any problem: one cause per check, at the check's line, with its
count and first records (personal values masked). What an error blocks is said by the records
left out, as a row's errors do: a record-level check takes the records it fails out of the block
(`--partial` applies the rest); a set-level one takes every record of the block out, so no
`--partial` can apply them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from loader.findings import Finding
from loader.record_fields import CUSTOM
from loader.source.block_records import BlockRecords
from loader.source.block_rows import LeftOut
from loader.source.check_rules import Check
from loader.source.patterns import PatternTimeout, full_match
from loader.source.records import DesiredRecord, Ref, display_value, quoted
from loader.words import plural

EXAMPLES = 5  # records a set-level finding names
_UNSET = object()


def field_value(record: DesiredRecord, name: str) -> Any:
    """The value a record holds for `name` (`custom_attributes.LABEL` for a label); _UNSET when it holds none."""
    if name.startswith(f"{CUSTOM}."):
        labels = record.fields.get(CUSTOM)
        return labels.get(name[len(CUSTOM) + 1:], _UNSET) if isinstance(labels, Mapping) else _UNSET
    return record.fields.get(name, _UNSET)


def is_empty(value: Any) -> bool:
    return value is _UNSET or value is None or value == "" or (isinstance(value, list | tuple) and not value)


def texts(value: Any) -> list[str]:
    """A value as the texts a check compares: a list item by item, a reference by the target's key."""
    shown = display_value(list(value) if isinstance(value, tuple) else value)
    return [str(v) for v in shown] if isinstance(shown, list) else [str(shown)]


def key_of(record: DesiredRecord) -> str:
    return "/".join(str(display_value(part)) for part in record.key)


def _severity(check: Check) -> Literal["error", "warning"]:
    return "error" if check.severity == "error" else "warning"


def with_checks(read: BlockRecords, checks: Sequence[Check]) -> BlockRecords:
    """`read` with the findings of its checks, and the records an error check blocks left out."""
    findings: list[Finding] = []
    blocked: dict[int, list[Finding]] = {}  # record index -> the error findings that block it
    for check in checks:
        if check.kind == "every":
            continue  # judged over every block read (`every_check_findings`)
        if check.record_level:
            for index, finding in _record_findings(check, read):
                findings.append(finding)
                if finding.severity == "error":
                    blocked.setdefault(index, []).append(finding)
            continue
        whole = _set_finding(check, read)
        if whole is not None:
            findings.append(whole)
            if whole.severity == "error":
                for index in range(len(read.records)):
                    blocked.setdefault(index, []).append(whole)
    if not findings:
        return read
    kept = tuple(r for i, r in enumerate(read.records) if i not in blocked)
    left_out = tuple(LeftOut(read.records[i].row, read.records[i].key, tuple(f)) for i, f in blocked.items())
    return replace(read, records=kept, findings=(*read.findings, *findings), left_out=(*read.left_out, *left_out))


def _record_findings(check: Check, read: BlockRecords) -> Iterable[tuple[int, Finding]]:
    name = check.fields[0]
    for index, record in enumerate(read.records):
        value = field_value(record, name)
        failed = _fails(check, value)
        if failed is None:
            continue
        key = key_of(record)
        got = "" if check.kind == "not_empty" else f", got {quoted(display_value(value), name in record.pii)}"
        yield index, Finding(_severity(check), f"check-{check.kind}",
                             f"check {check.title} fails for {read.entity} {key}: {failed}{got}",
                             record.place(name), cause=f"check {check.title} fails: {failed}", rule=check.place,
                             key=key)


def _fails(check: Check, value: Any) -> str | None:
    """Why `value` fails a record-level check, or None when it passes (an empty value passes `in`
    and `pattern`: `not_empty` is what asks for a value)."""
    if check.kind == "not_empty":
        return "empty" if is_empty(value) else None
    if is_empty(value):
        return None
    if check.kind == "in":
        wrong = [t for t in texts(value) if t not in check.values]
        return f"not one of {', '.join(check.values)}" if wrong else None
    assert check.pattern is not None
    try:
        wrong = [t for t in texts(value) if not full_match(check.pattern, t)]
    except PatternTimeout as exc:
        return str(exc)
    return f"does not match {check.regex}" if wrong else None


def _set_finding(check: Check, read: BlockRecords) -> Finding | None:
    records = read.records
    if check.kind == "rows":
        count = len(records)
        if (check.minimum is None or count >= check.minimum) and (check.maximum is None or count <= check.maximum):
            return None
        return _block_finding(check, read, f"{plural(count, 'record')} built", [])
    if check.kind == "unique":
        seen: dict[tuple[str, ...], int] = {}
        for record in records:
            values = tuple("/".join(texts(field_value(record, f))) for f in check.fields)
            seen[values] = seen.get(values, 0) + 1
        shared = [r for r in records
                  if seen[tuple("/".join(texts(field_value(r, f))) for f in check.fields)] > 1]
        return _block_finding(check, read, f"{plural(len(shared), 'record')} share their values with another", shared) \
            if shared else None
    empty = [r for r in records if is_empty(field_value(r, check.fields[0]))]
    share = len(empty) / len(records) if records else 0.0
    if check.max_share is None or share <= check.max_share:
        return None
    return _block_finding(check, read, f"{len(empty)} of {plural(len(records), 'record')} empty ({share:.0%}, at most "
                          f"{check.max_share:.0%} allowed)", empty)


def _block_finding(check: Check, read: BlockRecords, what: str, examples: Sequence[DesiredRecord]) -> Finding:
    first = ", ".join(key_of(r) for r in examples[:EXAMPLES])
    more = f" (first: {first}{', ...' if len(examples) > EXAMPLES else ''})" if first else ""
    blocks = "; the block is blocked" if check.severity == "error" else ""
    return Finding(_severity(check), f"check-{check.kind}", f"{read.block}: check {check.title} fails: {what}{more}"
                   f"{blocks}", check.place, cause=f"check {check.title} fails", rule=check.place)


class EveryIndex:
    """What `every … has … via` needs of the blocks as they are read (their records may be sent on
    before the last block is read): the keys each reference field names, and the records of the
    blocks that ask."""

    def __init__(self, checks: Iterable[Check]) -> None:
        """`checks`: every check of the blocks to be read (only the `every` ones matter here)."""
        self.wanted = {(c.has, c.via) for c in checks if c.kind == "every" and c.has and c.via}
        self.named: dict[tuple[str, str], set[str]] = {}  # (entity, field) -> keys its references name
        self.asking: list[tuple[BlockRecords, Check, tuple[tuple[str, DesiredRecord], ...]]] = []

    def add(self, read: BlockRecords, checks: Sequence[Check]) -> None:
        for entity, name in self.wanted:
            if entity != read.entity:
                continue
            named = self.named.setdefault((entity, name), set())
            for record in read.records:
                value = record.fields.get(name)
                for ref in value if isinstance(value, tuple | list) else (value,):
                    if isinstance(ref, Ref):
                        named.add("/".join(str(v) for v in ref.values))
        for check in checks:
            if check.kind == "every":
                self.asking.append((read, check, tuple((key_of(r), r) for r in read.records)))

    def findings(self) -> list[Finding]:
        """A finding per record that no record of the entity it must have names."""
        found: list[Finding] = []
        for read, check, records in self.asking:
            assert check.has is not None and check.via is not None
            named = self.named.get((check.has, check.via), set())
            for key, record in records:
                if key not in named:
                    found.append(Finding(
                        _severity(check), "check-every",
                        f"check {check.title} fails for {read.entity} {key}: no {check.has} names it in {check.via}",
                        record.row, cause=f"check {check.title} fails: no {check.has} names it", rule=check.place,
                        key=key))
        return found
