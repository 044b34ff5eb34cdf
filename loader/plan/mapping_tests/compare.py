"""Built records against a case's expected records: matched by key, compared field by field as text.

Expected values are the text written in the test file; a built value is turned into the same
text (`10` → "10", true → "true", a date → its ISO text, a reference → the target's key), so a
test says what a reviewer reads. Numbers also compare by value ("12.50" is 12.5). Only the
fields an expected record gives are compared; `custom_attributes` label by label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any

from loader.record_fields import CUSTOM
from loader.source.records import DesiredRecord, Ref

NOT_SET = "(not set)"


@dataclass(frozen=True)
class FieldDiff:
    """One field that differs: what the case expects and what the mapping built, as text."""

    field: str
    expected: Any
    built: Any


@dataclass(frozen=True)
class Failure:
    """Why a case failed: about one record (by its key) or the case as a whole, with field diffs."""

    message: str
    record: str = ""
    diffs: tuple[FieldDiff, ...] = ()


def as_text(value: Any) -> Any:
    """A built value as a test file writes it: text, a list of texts, a map of texts, or None."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Ref):
        return "/".join(str(v) for v in value.values)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): as_text(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_text(v) for v in value]
    return str(value)


def key_text(record: DesiredRecord) -> str:
    return "/".join(str(as_text(part)) for part in record.key)


def compare_records(expected: Sequence[dict[str, Any]], built: Sequence[DesiredRecord],
                    key_fields: tuple[str, ...], block: str) -> list[Failure]:
    """Every expected record built with the values given, and no record built that is not expected."""
    by_key = {key_text(r): r for r in built}
    failures: list[Failure] = []
    seen: set[str] = set()
    for wanted in expected:
        missing_key = [f for f in key_fields if wanted.get(f) is None]
        if missing_key:
            failures.append(Failure(f"an expected {block} record gives no {', '.join(missing_key)}: records are "
                                    f"matched by their key ({', '.join(key_fields)})", str(wanted)))
            continue
        key = "/".join(str(_key_part(wanted[f])) for f in key_fields)
        seen.add(key)
        record = by_key.get(key)
        if record is None:
            failures.append(Failure(f"expected a {block} record {key}, none was built", key))
            continue
        diffs = field_diffs(wanted, record)
        if diffs:
            failures.append(Failure(f"{block} record {key} differs", key, tuple(diffs)))
    for key in by_key:
        if key not in seen:
            failures.append(Failure(f"a {block} record {key} was built that the case does not expect", key))
    return failures


def _key_part(value: Any) -> Any:
    return value if not isinstance(value, dict) else "/".join(str(v) for v in value.values())


def field_diffs(wanted: Mapping[str, Any], record: DesiredRecord) -> list[FieldDiff]:
    """The fields of `wanted` the record holds other values in (custom_attributes label by label)."""
    diffs: list[FieldDiff] = []
    for name, expected in wanted.items():
        built = record.fields.get(name, NOT_SET) if name in record.fields else NOT_SET
        if name == CUSTOM and isinstance(expected, Mapping):
            labels = built if isinstance(built, Mapping) else {}
            for label, value in expected.items():
                got = labels[label] if label in labels else NOT_SET
                if not same(value, got):
                    diffs.append(FieldDiff(f"{CUSTOM}.{label}", value, _shown(got)))
        elif not same(expected, built):
            diffs.append(FieldDiff(name, expected, _shown(built)))
    return diffs


def _shown(built: Any) -> Any:
    return built if built is NOT_SET else as_text(built)


def same(expected: Any, built: Any) -> bool:
    """Whether a built value is what the case expects (None expects an empty or unset field)."""
    if expected is None:
        return built is NOT_SET or built is None or built == "" or (isinstance(built, list | tuple) and not built)
    if built is NOT_SET:
        return False
    text = as_text(built)
    if isinstance(expected, list):
        return isinstance(text, list) and len(text) == len(expected) and all(
            same(e, b) for e, b in zip(expected, built, strict=True))
    if isinstance(expected, dict):
        return isinstance(text, dict) and all(k in text and same(v, built[k]) for k, v in expected.items())
    return isinstance(text, str) and (text == str(expected) or _same_number(str(expected), text, built))


def _same_number(expected: str, text: str, built: Any) -> bool:
    digits = expected.lstrip("-")
    if isinstance(built, bool) or not isinstance(built, int | float) or (digits[:1] == "0" and digits[1:2].isdigit()):
        return False  # a leading zero is text: "0010" is never the number 10
    try:
        return float(expected) == float(text)
    except ValueError:
        return False
