"""How much a source file may make the loader read, so a small hostile file cannot exhaust memory.

Each limit is checked before the work it bounds is done (a declared size before inflating, a merged
range's area before filling it). A user with a genuinely larger file raises a limit through the
environment variable named in the message (documented for users in docs/mappings.md, "Limits").
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from loader.errors import SheetError


@dataclass(frozen=True)
class Limit:
    """One limit: its environment variable, default, and what it counts (for messages)."""

    variable: str
    default: int
    what: str

    def value(self) -> int:
        raw = os.environ.get(self.variable, "").strip().replace("_", "")
        if not raw:
            return self.default
        try:
            number = int(raw)
        except ValueError:
            raise SheetError(f"{self.variable}={raw!r} is not a whole number",
                             hint=f"set {self.variable} to a number such as {self.default}") from None
        return max(number, 0)

    def refuse(self, found: str, where: str) -> SheetError:
        limit = self.value()
        return SheetError(
            f"{found}, more than the limit of {limit:,} {self.what}; the file is refused before it is read "
            "(a file this large is usually a mistake or a decompression bomb)",
            where=where,
            hint=f"if the file is genuine, raise the limit: {self.variable}={limit * 4}",
        )


PART_BYTES = Limit("LOADER_MAX_PART_BYTES", 512 * 1024 * 1024, "bytes in one part of a workbook, once inflated")
CELLS = Limit("LOADER_MAX_CELLS", 20_000_000, "cells in one sheet (including every cell of merged ranges)")
STRING_CHARS = Limit("LOADER_MAX_STRING_CHARS", 1_000_000, "characters in one cell's text")
CSV_BYTES = Limit("LOADER_MAX_CSV_BYTES", 1024 * 1024 * 1024, "bytes in a CSV file")
CSV_LINE_CHARS = Limit("LOADER_MAX_CSV_LINE_CHARS", 1024 * 1024, "characters in one line of a CSV file")
CSV_COLUMNS = Limit("LOADER_MAX_CSV_COLUMNS", 16_384, "columns in one row of a CSV file (Excel's own limit)")
