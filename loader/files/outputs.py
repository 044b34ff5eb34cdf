"""Output files named on the command line are checked before any work, so nothing is lost at the end.

`check_output(path, option)` refuses, as a usage error naming the option, a path whose folder is
missing, a path that is a folder, a name too long for a file, and a place where this user cannot
create or write a file. It
writes nothing: an existing file is opened for appending (not truncated), a new one is probed by
a temporary file in its folder, removed at once.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from loader.errors import UsageError

NAME_BYTES = 255  # NAME_MAX: the longest name of a file most file systems allow


def check_output(path: Path, option: str) -> None:
    """Raise UsageError unless a file can be written at `path` (given as `option` on the command line)."""
    shown = f"{option} {path}"
    folder = path.parent if str(path.parent) else Path(".")
    if "\x00" in str(path):
        raise UsageError(f"{option}: the file name holds a NUL character")
    if len(os.fsencode(path.name)) > NAME_BYTES:
        raise UsageError(f"{option}: the file name is longer than the {NAME_BYTES} bytes a name may have",
                         hint="give a shorter file name")
    try:
        if path.is_dir():
            raise UsageError(f"{shown}: this is a folder", hint="give a file name, e.g. plan.json")
        if not folder.is_dir():
            raise UsageError(
                f"{shown}: the folder {folder} does not exist", hint=f"create it first (mkdir -p {folder})"
            )
        if path.exists():
            with path.open("ab"):
                pass
        else:
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".loader-probe-"):
                pass
    except OSError as error:
        raise UsageError(
            f"{shown}: cannot write there ({error.strerror or error})",
            hint="choose a folder you can write to; nothing was done",
        ) from None
