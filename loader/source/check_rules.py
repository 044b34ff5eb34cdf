"""A block's `checks:` (contract section 12) as frozen values, each at its mapping line.

```yaml
    checks:
      - {expect: unique, fields: [name]}
      - {expect: in, field: "custom_attributes.Credit Points", values: ["6", "12.5", "25"], severity: error}
      - {expect: not_empty, field: parent, max_share: 0%, severity: error}
      - {expect: pattern, field: code, regex: "[A-Z]{4}[0-9]{4}"}
      - {expect: rows, min: 1000}
      - {expect: every, has: subject, via: parent, severity: error}    # every program has a subject
```

Record-level checks (`in`, `pattern`, `not_empty` without `max_share`, `every`) judge each record;
set-level ones (`unique`, `rows`, `not_empty` with `max_share`) judge the block's records as a whole.
A check naming a field the block does not set is a mapping error at its line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from loader.places import MappingPlace
from loader.source.patterns import Pattern, compile_pattern
from loader.yaml_files import MarkedDocument

RECORD_LEVEL = frozenset({"in", "pattern", "not_empty", "every"})
KINDS = ("unique", "in", "not_empty", "rows", "pattern", "every")


@dataclass(frozen=True)
class Check:
    """One check of a block: what it expects, how severe a failure is, and where it is written."""

    kind: str  # one of KINDS
    severity: str  # "warn" | "error"
    place: MappingPlace
    fields: tuple[str, ...] = ()  # `unique`: the fields; the others: their one `field`
    values: tuple[str, ...] = ()  # `in`
    max_share: float | None = None  # `not_empty`: the share of records that may be empty (0.05)
    minimum: int | None = None  # `rows`
    maximum: int | None = None
    pattern: Pattern | None = None  # `pattern`
    regex: str = ""
    has: str | None = None  # `every`: the entity each record must have one of, referring to it...
    via: str | None = None  # ...through this field of that entity

    @property
    def record_level(self) -> bool:
        return self.kind in RECORD_LEVEL and not (self.kind == "not_empty" and self.max_share is not None)

    @property
    def title(self) -> str:
        """How reports name the check: `in custom_attributes.Credit Points`, `unique (name)`."""
        if self.kind == "rows":
            bounds = [f"at least {self.minimum}" if self.minimum is not None else "",
                      f"at most {self.maximum}" if self.maximum is not None else ""]
            return f"rows ({' and '.join(b for b in bounds if b)})"
        if self.kind == "every":
            return f"every record has a {self.has} (via {self.via})"
        if self.kind == "unique":
            return f"unique ({', '.join(self.fields)})"
        return f"{self.kind} {self.fields[0]}"


Fail = Callable[[str, str, tuple[Any, ...]], None]  # (code, message, where in the document)


def block_checks(doc: MarkedDocument, base: tuple[Any, ...], data: Any, field_names: Sequence[str],
                 fail: Fail) -> tuple[Check, ...]:
    """The block's checks (`data`: its schema-valid `checks:` list, or None); each problem said
    through `fail` at its place, that check left out."""
    checks: list[Check] = []
    for index, entry in enumerate(data or ()):
        at = (*base, "checks", index)
        check = _check(doc, at, entry, fail)
        if check is None:
            continue
        unset = [f for f in check.fields if f not in field_names]
        if unset:
            fail("check-field", f"check `{check.kind}` names {', '.join(repr(f) for f in unset)}, which this block "
                 f"does not set (it sets: {', '.join(field_names)})", at)
            continue
        checks.append(check)
    return tuple(checks)


def _check(doc: MarkedDocument, at: tuple[Any, ...], entry: dict[str, Any], fail: Fail) -> Check | None:
    kind = entry["expect"]
    severity = entry.get("severity", "warn")
    place = doc.place(at)
    fields = tuple(entry["fields"]) if kind == "unique" else (entry["field"],) if "field" in entry else ()
    if kind in ("in", "not_empty", "pattern") and not fields:
        fail("check-field", f"check `{kind}` needs a `field`", at)
        return None
    if kind == "in":
        values = tuple(doc.raw.get((*at, "values", i), str(v)) for i, v in enumerate(entry.get("values") or ()))
        return Check(kind, severity, place, fields, values=values)
    if kind == "not_empty":
        share = _share(entry.get("max_share"))
        if share is None and "max_share" in entry:
            fail("check-share", f"max_share must be a share such as 5% or 0.05, not {entry['max_share']!r}", at)
            return None
        return Check(kind, severity, place, fields, max_share=share)
    if kind == "pattern":
        try:
            pattern = compile_pattern(str(entry["regex"]))
        except ValueError as exc:
            fail("bad-pattern", f"bad regular expression: {exc}", (*at, "regex"))
            return None
        return Check(kind, severity, place, fields, pattern=pattern, regex=str(entry["regex"]))
    if kind == "rows":
        if entry.get("min") is None and entry.get("max") is None:
            fail("check-rows", "check `rows` needs `min`, `max` or both", at)
            return None
        return Check(kind, severity, place, minimum=entry.get("min"), maximum=entry.get("max"))
    if kind == "every":
        return Check(kind, severity, place, has=str(entry["has"]), via=str(entry["via"]))
    return Check(kind, severity, place, fields)


def _share(value: Any) -> float | None:
    """`5%` or 0.05 as 0.05; None for what is neither, or a share outside 0..1."""
    if value is None:
        return None
    try:
        share = float(value[:-1]) / 100 if isinstance(value, str) and value.endswith("%") else float(value)
    except ValueError:
        return None
    return share if 0 <= share <= 1 else None
