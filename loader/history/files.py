"""The history's own files, read and written so that a damaged or planted one is refused, never
followed, waited on or read without end.

A history folder lives in a checkout anyone can edit, merge or plant things in. Every file of it is
read and written here:

- a file is opened with `O_NOFOLLOW | O_NONBLOCK` and must be a regular file: a symbolic link (to
  `/dev/zero`, to a file outside the project), a FIFO, a folder or a device is refused, never read
  through or waited on; and it is read up to a bound (a head, a snapshot file, a journal line), so
  an outsized file is an error, not the memory exhausted;
- a file is written to a fresh temporary file made with `O_EXCL | O_NOFOLLOW` in its own folder,
  then moved over it (`os.replace` replaces a planted symbolic link, never writes through it); a
  snapshot or journal folder that is a symbolic link is refused, never read or written into (the
  history's folder itself, like the project's, may be reached through one).

Every refusal is a `HistoryError` naming the file and the repair (`repair_hint`).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from loader.history.errors import HistoryError

MAX_HEAD_BYTES = 1024 * 1024
MAX_FILE_BYTES = 1024 * 1024 * 1024  # any snapshot file or journal read whole (they are written far smaller)
MAX_LINE_BYTES = 16 * 1024 * 1024  # one journal line
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_PARTS = ("snapshot", "journal")  # the history's folders (`loader.history.store`)


def repair_hint(folder: Path) -> str:
    """What to do about a damaged history in `folder`."""
    return (f"restore {folder} as git last had it (`git checkout -- {folder}`), then plan again; if there is "
            "no good copy, run `loader history reset` and `loader history baseline MAPPING...` (the live values "
            "become W: platform edits made before count as the loader's)")


def history_of(path: Path) -> Path:
    """The history folder a file of it (its head, a snapshot file, a journal) belongs to."""
    return path.parent.parent if path.parent.name in _PARTS else path.parent


def damaged(message: str, path: Path, hint: str | None = None) -> HistoryError:
    """The error for a file of the history that cannot be used as it is."""
    return HistoryError(message, where=str(path), hint=hint or repair_hint(history_of(path)))


def checked_folder(folder: Path) -> bool:
    """Whether `folder` exists; a `HistoryError` when it is a symbolic link or not a folder."""
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(mode):
        raise damaged("is a symbolic link: the history never reads or writes through one", folder)
    if not stat.S_ISDIR(mode):
        raise damaged("is not a folder", folder)
    return True


def regular_files(folder: Path, pattern: str) -> list[Path]:
    """The files in `folder` matching `pattern`, sorted; a `HistoryError` for one that is not a
    regular file (a folder, a FIFO, a symbolic link) and for a `folder` that is a symbolic link."""
    if not checked_folder(folder):
        return []
    found = sorted(folder.glob(pattern))
    for path in found:
        _check_mode(os.lstat(path).st_mode, path)
    return found


def _check_mode(mode: int, path: Path) -> None:
    if stat.S_ISLNK(mode):
        raise damaged("is a symbolic link: the history never reads or writes through one", path)
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        raise damaged(f"is {kind} where a file of the history belongs", path)


def open_regular(path: Path, hint: str | None = None) -> int | None:
    """A descriptor of the regular file `path` open for reading (the caller closes it); None when
    there is no such file; a `HistoryError` for anything else there."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP or path.is_symlink():
            raise damaged("is a symbolic link: the history never reads or writes through one", path, hint) from None
        raise damaged(f"cannot be read ({error.strerror})", path, hint) from None
    try:
        _check_mode(os.fstat(fd).st_mode, path)
    except HistoryError as error:
        os.close(fd)
        raise HistoryError(error.message, where=error.where, hint=hint or error.hint) from None
    return fd


def read_bounded(path: Path, limit: int, hint: str | None = None) -> bytes | None:
    """The bytes of the regular file `path` (None when there is none); a `HistoryError` when it is
    not a regular file or holds more than `limit` bytes."""
    fd = open_regular(path, hint)
    if fd is None:
        return None
    size = os.fstat(fd).st_size
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(min(size, limit) + 1)  # what it holds, not the bound: no buffer of the bound's size
        if size < len(data) <= limit:  # it grew since: read on, still bounded
            data += handle.read(limit + 1 - len(data))
    if len(data) > limit:
        raise damaged(f"is larger than the history ever writes ({limit} bytes)", path, hint)
    return data


def read_lines(path: Path, limit: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of the regular file `path`, each with its line break (a last line may lack it); a
    `HistoryError` for a line longer than `limit` or a file that is not a regular file."""
    fd = open_regular(path)
    if fd is None:
        raise damaged("is missing", path)
    with os.fdopen(fd, "rb") as handle:
        while row := handle.readline(limit + 1):
            if len(row) > limit:
                raise damaged(f"holds a line longer than the history ever writes ({limit} bytes)", path)
            yield row


def write_atomically(path: Path, data: bytes) -> None:
    """Write `data` to `path` so a reader sees the old file or the new one, never a part: through a
    fresh temporary file in the same folder (never a planted one) moved over `path`."""
    folder = path.parent
    if folder.name not in _PARTS:  # the history's own folder, or a project's, may be reached through a link
        folder.mkdir(parents=True, exist_ok=True)
    elif not checked_folder(folder):  # a snapshot or journal folder that is a link is refused
        folder.mkdir(parents=True)
    try:
        if read_bounded(path, len(data)) == data:
            return
    except HistoryError:
        pass  # whatever is there (too large, a symbolic link, a FIFO) is replaced, never read
    if path.is_dir() and not path.is_symlink():
        raise damaged("is a folder where a file of the history belongs", path)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)  # O_EXCL | O_NOFOLLOW
    try:
        with os.fdopen(fd, "wb") as out:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, 0o644)  # as an ordinary file, not mkstemp's owner-only
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def create_new(path: Path) -> int:
    """A descriptor of the new file `path`, open for appending (`O_EXCL | O_NOFOLLOW`: never one
    that is there already, never through a symbolic link); its folder made when missing."""
    if not checked_folder(path.parent):
        path.parent.mkdir(parents=True)
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | _NOFOLLOW, 0o644)
    except FileExistsError:
        raise damaged("is already there: a journal is never written over", path) from None
