"""Files only their owner may read: plans, results and crash logs hold values to send (personal data)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

PRIVATE_MODE = 0o600


def open_private(path: Path) -> BinaryIO:
    """`path` opened for binary writing, mode 0600 before a byte is written, new or already there."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_MODE)
    try:
        os.fchmod(descriptor, PRIVATE_MODE)  # an existing file keeps its old mode through O_CREAT
        return os.fdopen(descriptor, "wb")  # buffered: writes all of it (os.write may write a part)
    except BaseException:
        os.close(descriptor)
        raise


def write_private_text(path: Path, text: str) -> None:
    with open_private(path) as handle:
        handle.write(text.encode("utf-8"))
