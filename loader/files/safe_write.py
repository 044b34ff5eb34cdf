"""Every file the loader writes goes through `replacing`: plans, reports, review and results
workbooks, pulled workbooks, decisions.yaml, init drafts and crash logs.

A file is never written in place. `replacing(path)` creates a fresh temporary file in the target's
folder, under a name nobody can guess, exclusively and without following a symlink
(O_EXCL | O_NOFOLLOW), writes it whole, then renames it over the target (os.replace). So:

- a symlink planted at a temporary name (`.decisions.yaml.tmp`, which can arrive in a pull request)
  is never written through: the name is random and O_EXCL refuses anything already there;
- a symlink at the target is replaced by the new file, never followed (a rename does not follow it);
- a crash or Ctrl-C while writing leaves the old file as it was, and the temporary file removed.

Private files (the default: plans, results, reports and workbooks hold values to send, personal
data) are mode 0600 before their first byte, whatever the umask. Files meant for git (decisions.yaml,
an init draft) take the umask's mode, as any file the user's editor saves.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from loader.files.private import PRIVATE_MODE

_CREATE_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)
_SHARED_MODE = 0o666  # less the umask, as open() gives
_NAME_KEPT = 60  # of the target's name in the temporary one: a long name must not make it too long
_TRIES = 16


def temporary_name(path: Path) -> Path:
    """A fresh name beside `path` for its temporary file: hidden, random, ending in `.tmp`."""
    return path.with_name(f".{path.name[:_NAME_KEPT]}.{secrets.token_hex(8)}.tmp")


def _create_beside(path: Path, mode: int) -> tuple[Path, int]:
    """A new temporary file beside `path`, opened exclusively: its name and descriptor."""
    for _ in range(_TRIES):
        temporary = temporary_name(path)
        try:
            return temporary, os.open(temporary, _CREATE_FLAGS, mode)
        except FileExistsError:
            continue  # a name already taken (planted or left over): another random name
    raise FileExistsError(f"no free temporary name beside {path}")


@contextmanager
def replacing(path: Path, *, private: bool = True) -> Iterator[BinaryIO]:
    """A binary handle whose bytes replace the file at `path` when the block ends without an error;
    on an error the temporary file is removed and `path` is left as it was."""
    temporary, descriptor = _create_beside(path, PRIVATE_MODE if private else _SHARED_MODE)
    try:
        if private:
            os.fchmod(descriptor, PRIVATE_MODE)  # the mode given to open() went through the umask
        with os.fdopen(descriptor, "wb") as handle:  # buffered: writes all of it
            descriptor = -1  # closed by the handle from here on
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        if descriptor >= 0:
            os.close(descriptor)
        temporary.unlink(missing_ok=True)
        raise


def write_bytes(path: Path, data: bytes, *, private: bool = True) -> None:
    """Replace the file at `path` by `data` (see `replacing`)."""
    with replacing(path, private=private) as handle:
        handle.write(data)


def write_text(path: Path, text: str, *, private: bool = True) -> None:
    """Replace the file at `path` by `text` in UTF-8, lines ending as written (see `replacing`)."""
    write_bytes(path, text.encode("utf-8"), private=private)
