"""The values a history holds: a record's line, and per managed field its owner and W."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from loader.history.digests import Written

CUSTOM = "custom_attributes"


def label_field(label: str) -> str:
    """The field name under which a custom attribute's label has its own mark."""
    return f"{CUSTOM}.{label}"


class Owner(NamedTuple):
    """The block that set a field: its mapping file (as the project names it) and block name. (A
    named tuple: a snapshot hashes its owners hundreds of thousands of times.)"""

    file: str
    block: str


Edited = tuple[int, str | None]
"""Who first changed a field in the platform and when, as the live record's `metadata.updated`
said then: (time in epoch milliseconds, the service user's id, None when the service named none)."""


class FieldMark(NamedTuple):
    """One managed field of a record: who owns it and W, the digest of the value last written or
    last found equal to the sheet (one digest per element for a set-like list), and `edited`: who
    first changed it in the platform and when (kept until the loader's value is back: a write or a
    confirmation of the field clears it). A named tuple, as a snapshot's lines are parsed by the
    hundred thousand."""

    owner: Owner
    written: Written
    edited: Edited | None = None


@dataclass(frozen=True)
class HistoryLine:
    """One record as the history knows it. `key` and `live_id` are tokens (`Digester.key_token`,
    `Digester.id_token`); `updated_*` is the record's `metadata.updated` as seen then. `fields` maps
    a field name (`custom_attributes.<label>` for a label) to its mark; treat it as read-only.
    `former_keys` are the key tokens the record had before (renumbered, or a duplicate's key taken
    as this record's), oldest first."""

    key: str
    live_id: str
    updated_time: int | None = None
    updated_user: str | None = None
    fields: Mapping[str, FieldMark] = field(default_factory=dict)
    former_keys: tuple[str, ...] = ()

    def with_fields(self, marks: Mapping[str, FieldMark]) -> HistoryLine:
        """This line with `marks` set over its fields (a field not named keeps its mark)."""
        return HistoryLine(self.key, self.live_id, self.updated_time, self.updated_user, {**self.fields, **marks},
                           self.former_keys)


def moved_keys(former_keys: tuple[str, ...], old_key: str, new_key: str) -> tuple[str, ...]:
    """A record's former keys once its key moves from `old_key` to `new_key`: the old key last, the
    new one no longer former (a revert moves a key back)."""
    return (*(k for k in former_keys if k not in (old_key, new_key)), old_key)


def line_digest(line: HistoryLine | None) -> str:
    """A short fingerprint of a record's history line ("none" when it has none), so a reviewed plan
    can refuse to apply once another apply changed the lines it compared against."""
    if line is None:
        return "none"
    marks = {name: [m.owner.file, m.owner.block, m.written if isinstance(m.written, str) else sorted(m.written)]
             for name, m in line.fields.items()}
    parts: list[object] = [line.key, line.live_id, line.updated_time, line.updated_user, marks]
    if line.former_keys:  # a line without them keeps the fingerprint it had before they existed
        parts.append(list(line.former_keys))
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
