"""A journal's parts: a journal larger than a part size is written as several files, read in order.

    journal/<id>.open.jsonl   the first part while the apply runs (`<id>.jsonl` once it ended):
                              the header, then entries
    journal/<id>.002.jsonl    the next part: its own header line naming the apply and its number,
                              then entries; and so on

A part that another follows ends with a line naming the next part's number, so a part deleted or
lost (a bad merge, a file left out of a commit) is told, never read as a shorter journal. Only the
first part changes name when the apply ends; the others are written under their final names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MAX_PART_BYTES = 50 * 1024 * 1024  # GitHub warns about files over 50 MB and refuses them over 100 MB
CONTINUED = "continued"  # the last line of a part another follows: {"continued": <its number>}
PART = "part"  # a later part's header: {"apply": <id>, "journal": <format>, "part": <its number>}


def part_path(first: Path, number: int) -> Path:
    """The file of part `number` (1: the first, `first` itself) of the journal whose first part is `first`."""
    if number == 1:
        return first
    return first.with_name(f"{apply_id_of(first)}.{number:03d}.jsonl")


def apply_id_of(path: Path) -> str:
    """The id of the apply a journal file (any of its parts) belongs to."""
    return path.name.split(".")[0]


def is_later_part(path: Path) -> bool:
    """Whether `path` is a journal's second or later part (`<id>.002.jsonl`)."""
    parts = path.name.split(".")
    return len(parts) == 3 and parts[1].isdigit()


def continued_line(number: int) -> str:
    """The line that ends a part the part `number` follows."""
    return f'{{"{CONTINUED}":{number}}}\n'


def continued_to(item: Any) -> int | None:
    """The number of the part a parsed line says comes next (None: it is not such a line)."""
    if isinstance(item, dict) and len(item) == 1 and type(item.get(CONTINUED)) is int:
        return int(item[CONTINUED])
    return None


def part_header(apply_id: str, journal_format: int, number: int) -> str:
    """A later part's first line."""
    return json.dumps({"apply": apply_id, "journal": journal_format, PART: number}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False) + "\n"
