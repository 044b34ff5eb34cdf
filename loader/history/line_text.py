"""A snapshot line's fingerprint read off its text, as a plan asks for it.

`loader.history.lines.line_digest` is the definition (a line's parts as JSON, then SHA-256). A plan
compares most records against lines it never needs whole: `LineTexts.digest` writes the same JSON
text straight from the line's columns (its owners, users and field names encoded once per shard's
tables), without making the `HistoryLine` and its marks first.
"""

from __future__ import annotations

import hashlib
import json
from json.encoder import encode_basestring

from loader.history.snapshot import FIRST_FIELD, Tables


class LineTexts:
    """The fingerprints of the lines of one shard's `tables`."""

    def __init__(self, tables: Tables) -> None:
        fields = tables.fields
        # each field's column and its name as JSON, in the order `json.dumps(sort_keys=True)` writes them
        self._fields = [(FIRST_FIELD + i, encode_basestring(fields[i]) + ": [")
                        for i in sorted(range(len(fields)), key=fields.__getitem__)]
        self._owners = [f"{encode_basestring(o.file)}, {encode_basestring(o.block)}, " for o in tables.owners]
        self._users = [encode_basestring(user) for user in tables.users]

    def digest(self, text: str) -> str:
        """`line_digest(parse_line(text, tables))`."""
        columns = text.split("\t")
        key, live_id, time, user = columns[:4]
        count = len(columns)
        marks = [name + self._mark(columns[at]) for at, name in self._fields if at < count and columns[at]]
        former = json.loads(columns[4]) if count > 4 and columns[4] else ()
        parts = [encode_basestring(key), encode_basestring(live_id), str(int(time)) if time else "null",
                 self._users[int(user)] if user else "null", "{" + ", ".join(marks) + "}"]
        if former:
            parts.append("[" + ", ".join(encode_basestring(str(k)) for k in former) + "]")
        return hashlib.sha256(("[" + ", ".join(parts) + "]").encode()).hexdigest()[:16]

    def _mark(self, column: str) -> str:
        """A field's mark as `line_digest` writes it: [file, block, W] (a set's W its sorted elements)."""
        dot = column.index(".")
        at = column.find("@", dot)
        written = column[dot + 1:] if at < 0 else column[dot + 1:at]
        if written[:1] == "[":
            elements = sorted(set(written[1:].split(",")) - {""})
            written_json = "[" + ", ".join(encode_basestring(e) for e in elements) + "]"
        else:
            written_json = encode_basestring(written)
        return self._owners[int(column[:dot])] + written_json + "]"
