"""A block's `drift:` (contract section 12) and what drift needs to know of the block, as values.

```yaml
    drift: {rows: 10%, columns: warn, values: [custom_attributes.Faculty], accept: ["Credit Points (2027)"]}
```

`rows`: how far rows read and rows kept may move from the last apply (unset: not compared);
`columns`: `warn` (default) or `freeze` (new or missing columns are errors); `values`: fields whose
values never seen before are reported (not personal, at most 200 distinct values); `accept`:
changes a reviewer accepted (a column's name, or FIELD=VALUE). Every block also carries the
columns it reads and its `repeat:` column patterns, so a new "Qual 4 Type" beside `n: [1, 2, 3]`
is found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from loader.places import MappingPlace
from loader.source.readers import SheetData
from loader.yaml_files import MarkedDocument

MAX_VALUES = 200  # distinct values a `drift.values` field may hold


@dataclass(frozen=True)
class DriftRules:
    """What a block says of drift, and the repeat patterns of its columns."""

    place: MappingPlace | None = None  # the `drift:` line (None: the block says nothing of drift)
    rows: float | None = None  # 0.1 for 10%: the largest change of rows read and kept not reported
    columns: str = "warn"  # "warn" | "freeze"
    values: tuple[str, ...] = ()
    accept: tuple[str, ...] = ()
    repeat_name: str | None = None
    repeat_values: tuple[str, ...] = ()
    repeat_columns: tuple[str, ...] = ()  # the columns written with the placeholder: "Qual {n} Type"

    def unlisted_repeat(self, column: str) -> str | None:
        """The value `column` would give the repeat placeholder when `repeat:` does not list it, else None."""
        if self.repeat_name is None:
            return None
        marker = "{" + self.repeat_name + "}"
        for template in self.repeat_columns:
            pattern = re.escape(template).replace(re.escape(marker), "(.+?)")
            found = re.fullmatch(pattern, column)
            if found and found.group(1) not in self.repeat_values:
                return found.group(1)
        return None


Fail = Callable[[str, str, tuple[Any, ...]], None]


def drift_rules(doc: MarkedDocument, base: tuple[Any, ...], data: dict[str, Any], field_names: set[str],
                personal: set[str], fail: Fail) -> DriftRules:
    """The block's drift rules; a `values` field it does not set, or a personal one, is said through `fail`."""
    repeat = data.get("repeat")
    name, values = next(iter(repeat.items())) if isinstance(repeat, dict) and repeat else ("", [])
    name = str(name)
    listed = tuple(doc.raw.get((*base, "repeat", name, i), str(v)) for i, v in enumerate(values))
    columns = tuple(dict.fromkeys(_placeholders(data, "{" + name + "}"))) if name else ()
    drift = data.get("drift")
    if not isinstance(drift, dict):
        return DriftRules(repeat_name=name or None, repeat_values=listed, repeat_columns=columns)
    at = (*base, "drift")
    for index, field in enumerate(drift.get("values") or ()):
        if field not in field_names:
            fail("drift-field", f"drift values: {field!r} is not a field this block sets", (*at, "values", index))
        elif field in personal:
            fail("drift-personal", f"drift values: {field!r} is personal: its values are never recorded",
                 (*at, "values", index))
    rows = drift.get("rows")
    return DriftRules(doc.place(at, key=True), float(str(rows).rstrip("%")) / 100 if rows is not None else None,
                      str(drift.get("columns", "warn")), tuple(drift.get("values") or ()),
                      tuple(str(a) for a in drift.get("accept") or ()), name or None, listed, columns)


def _placeholders(data: dict[str, Any], marker: str) -> Iterator[str]:
    """Every column the block's `fields` and `where` name with `marker` in it (a field's shorthand
    text is its column)."""
    found: list[Any] = []
    for name, value in (data.get("fields") or {}).items():
        for spec in value.values() if name == "custom_attributes" and isinstance(value, dict) else (value,):
            found += [spec] if isinstance(spec, str) else _columns_in(spec)
    found += _columns_in(data.get("where"))
    return (text for text in found if isinstance(text, str) and marker in text)


def _columns_in(data: Any) -> list[Any]:
    """The `column:` values in a field's spec or a condition, however nested (`when`, lists of conditions)."""
    if isinstance(data, list):
        return [c for item in data for c in _columns_in(item)]
    if not isinstance(data, dict):
        return []
    column = data.get("column")
    own = column if isinstance(column, list) else [column]
    return own + [c for key, value in data.items() if key in ("when", "all", "any") for c in _columns_in(value)]


def filled_shares(data: SheetData, header_row: int) -> tuple[tuple[str, float], ...]:
    """Each named column of the header row, with the share of the rows below it that hold a value
    (what tells a column gone mostly empty between cycles). Counted a column at a time, by the
    interpreter's own `count`: an empty cell is None or "" (a cell of spaces counts as held)."""
    header = next((row.values for row in data.rows if row.number == header_row), ())
    body = [row.values for row in data.rows if row.number > header_row]
    if not body:
        return ()
    shares: dict[str, float] = {}
    for name, column in zip(header, zip_longest(*body, fillvalue=None), strict=False):
        if name is None or not str(name).strip():
            continue
        held = len(column) - column.count(None) - column.count("")
        shares.setdefault(str(name).strip(), round(held / len(body), 3))
    return tuple(shares.items())
