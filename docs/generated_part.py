"""The generated part of a docs page: the text between two marker lines, made by a script
(docs/commands_page.py, docs/mapping_keys_page.py) and kept current by a test.

    python docs/NAME_page.py            rewrite the part between the markers of its page
    python docs/NAME_page.py --check    exit 1 when the committed page is not current
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path


def with_part(text: str, part: str, begin: str, end: str) -> str:
    """`text` with what lies from the line `begin` to the line `end` (both included) replaced by `part`."""
    start, stop = text.index(begin), text.index(end) + len(end)
    return text[:start] + part + text[stop:]


def rewrite_or_check(page: Path, wanted: str, script: str, argv: Sequence[str]) -> int:
    """Write `wanted` to `page`; with `--check`, only say (exit 1) when the page differs from it."""
    if "--check" in argv:
        if wanted != page.read_text(encoding="utf-8"):
            print(f"{page} is not current: run `python {script}`", file=sys.stderr)
            return 1
        return 0
    page.write_text(wanted, encoding="utf-8")
    return 0
