"""Files only their owner may read: plans, results and crash logs hold values to send (personal data).

Modes are set with fchmod/chmod after creation, not left to the mode given to open/mkdtemp: that one
goes through the umask (and a directory's default ACL), so a file could come out 0400, or 0640.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO

PRIVATE_MODE = 0o600
PRIVATE_FOLDER_MODE = 0o700


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


def private_folder(prefix: str) -> Path:
    """A new folder in the temp directory only its owner may enter: a name nobody can guess, made by
    mkdtemp (refused if anything is there), mode 0700. The temp directory is resolved first, so a
    symlinked one (macOS's /tmp, a TMPDIR that is a link) gives the folder's real path."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=os.path.realpath(tempfile.gettempdir())))
    os.chmod(folder, PRIVATE_FOLDER_MODE)
    return folder


def create_private(path: Path) -> BinaryIO:
    """A new file at `path` for binary writing, mode 0600 before a byte is written; never an existing
    file, nor through a symlink planted at `path` (O_EXCL | O_NOFOLLOW)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(path, flags, PRIVATE_MODE)
    try:
        os.fchmod(descriptor, PRIVATE_MODE)
        return os.fdopen(descriptor, "wb")
    except BaseException:
        os.close(descriptor)
        raise
