"""Who is writing a history right now, told by advisory locks (`flock`) the system drops when the
process ends however it ends (a SIGKILL included), so a lock never outlives its apply:

- an apply holds its **journal** locked while it writes it: a journal still `.open` whose lock
  nobody holds is a leftover of an apply that did not finish (folded by the next command); one that
  is held belongs to an apply still running, in another terminal or job, and is left alone;
- an apply holds its history's **folder** locked from its first write to its end, so a second
  apply on the same history (two terminals, two CI jobs on one runner) is refused with what to do
  instead of interleaving its journal and snapshot writes with the first one's.

Where the system has no `flock` (Windows), nothing is locked and nothing is refused.
"""

from __future__ import annotations

import os
from pathlib import Path

from loader.history.errors import HistoryError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def lock_journal(fd: int) -> None:
    """Mark the journal open on `fd` as written by a running apply (held until `fd` is closed)."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def being_written(path: Path) -> bool:
    """Whether a running apply holds the journal at `path` (False for a leftover of one that ended),
    or the history folder at `path` (`hold_folder`)."""
    if fcntl is None:
        return False
    try:  # never through a symbolic link, never waiting on a FIFO planted where a journal belongs
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def hold_folder(folder: Path) -> int | None:
    """Lock `folder` for one apply; the descriptor to `release` at its end (None: no locking here).
    HistoryError when another apply holds it."""
    if fcntl is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise HistoryError(
            "another apply is writing this history now", where=str(folder),
            hint="wait for it to finish and plan again (two applies at once would each write over what "
                 "the other changed); in CI, give each environment one concurrency group") from None
    return fd


def release(fd: int | None) -> None:
    """Let go of a folder `hold_folder` locked."""
    if fd is not None:
        os.close(fd)
