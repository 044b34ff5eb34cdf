"""One journal entry as its line of JSON, put together from its parts.

The line is exactly what `json.dumps(entry, ensure_ascii=False, sort_keys=True, default=str,
separators=(",", ":"))` makes of the entry's dict, but built without the dict: an apply journals
every write as its answer arrives, and the JSON of a whole entry cost more than its digests. The
texts that repeat from line to line (field names, owners) are made once per writer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from json.encoder import encode_basestring
from typing import Any

from loader.history.digests import Written
from loader.history.lines import Owner

Mark = tuple[Owner, Written, Any, Any]
"""(owner, W, the value before: a digest for a personal entity, the value after: `NO_VALUE` when it
is not kept, as for a personal entity)."""


class _NoValue:
    """The value after of a write whose value is not kept (a personal field, a confirmation made
    without the value): the entry names no "after"."""

    def __repr__(self) -> str:
        return "NO_VALUE"


NO_VALUE: Any = _NoValue()


def json_text(value: Any) -> str:
    """Any value as a journal line holds it."""
    if value is None:
        return "null"
    if type(value) is str:
        return encode_basestring(value)
    if type(value) is int:
        return str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str, separators=(",", ":"))


def written_text(written: Written) -> str:
    """W as JSON: one digest, or a set's element digests as a sorted list."""
    if isinstance(written, str):
        return encode_basestring(written)
    return "[" + ",".join(encode_basestring(element) for element in sorted(written)) + "]"


class EntryText:
    """Makes one writer's journal lines (one object per writer: it remembers the texts of the field
    names and owners it has seen).

    The fields' owner is named once, as the entry's `block` (the owner of its first field by name),
    and only a field another block owns names its `owner`; a value before that is none (a create's)
    is left out. Readers take a field without `owner` as the block's and without `before` as none.
    """

    def __init__(self) -> None:
        self._names: dict[str, str] = {}  # per field, the text that opens its object
        self._owners: dict[Owner, str] = {}  # per owner, its JSON
        self._orders: dict[tuple[str, ...], tuple[str, ...]] = {}  # the field names of entries, sorted

    def line(self, kind: str, entity: str, key: str, live_id: str | None,
             updated: tuple[int, str | None] | None, marks: Mapping[str, Mark], personal: bool,
             formerly: str | None = None) -> str:
        """An entry's line (with its line break). `marks` holds per field (owner, W, before, after);
        `formerly` the key token the record had before this entry (a renumbering)."""
        names = tuple(marks)
        order = self._orders.get(names)
        if order is None:  # entries of one block name the same fields, in the same order
            order = self._orders[names] = tuple(sorted(names))
        block = marks[order[0]][0] if order else None
        parts = ['{"block":', self._owner(block), ","] if block is not None else ["{"]  # joined once, at the end
        parts += ('"entity":', encode_basestring(entity), ',"fields":{')
        for name in order:
            self._field(parts, name, marks[name], block, personal)
        if order:
            parts[-1] = "}"  # no comma after the last field
        parts.append("}")
        if formerly is not None:
            parts += (',"formerly":', encode_basestring(formerly))
        parts += (',"id":', "null" if live_id is None else json_text(live_id), ',"key":', encode_basestring(key),
                  ',"kind":', encode_basestring(kind))
        if updated is not None:
            time, user = updated
            parts += (',"updated":[', str(time) if type(time) is int else json_text(time), ",", json_text(user), "]")
        parts.append("}\n")
        return "".join(parts)

    def _field(self, parts: list[str], name: str, mark: Mark, block: Owner | None, personal: bool) -> None:
        """One field's object, appended to `parts` with a comma after it."""
        owner, written, before, after = mark
        opening = self._names.get(name)
        if opening is None:
            opening = self._names[name] = f"{encode_basestring(name)}:{{"
        parts.append(opening)
        if after is not NO_VALUE and not personal:
            parts += ('"after":', "null" if after is None else json_text(after), ",")
        if personal:
            parts += ('"before":', written_text(before), ",")
        elif before is not None:
            parts += ('"before":', json_text(before), ",")
        if owner is not block and owner != block:
            parts += ('"owner":', self._owner(owner), ",")
        parts += ('"w":', encode_basestring(written) if type(written) is str else written_text(written), "},")

    def _owner(self, owner: Owner) -> str:
        text = self._owners.get(owner)
        if text is None:
            text = self._owners[owner] = json_text([owner.file, owner.block])
        return text
