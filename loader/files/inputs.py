"""Reading a small input file (mapping, loader.yaml, plan.json) without hanging or exhausting memory.

`read_regular_file` opens without blocking (a FIFO would wait for a writer forever), refuses what
is not a regular file (`/dev/zero`, a FIFO, a folder) and a file larger than `limit`, and reads at
most `limit` bytes even if the file grows meanwhile. A missing or unreadable file raises OSError
as `open` does; everything else it refuses raises InputRefused (an OSError) with a sentence for
the user. `decode_utf8` raises NotUtf8 (a ValueError) naming the line, column and byte.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_TEXT_FILE_BYTES = 16 * 1024 * 1024  # a mapping, loader.yaml or plan.json this size is a mistake


class InputRefused(OSError):
    """The file is not something the loader reads: the message says why. An OSError, so every
    caller's "cannot read this file" answers it as it answers a missing file."""


class NotUtf8(ValueError):
    """The text is not UTF-8; `line` and `column` (1-based) locate the first bad byte."""

    def __init__(self, message: str, line: int, column: int):
        super().__init__(message)
        self.line = line
        self.column = column


def read_regular_file(path: Path, *, limit: int = MAX_TEXT_FILE_BYTES) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them (else InputRefused)."""
    if "\x00" in str(path):
        raise InputRefused("the file name holds a NUL character")
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a device, a pipe or a socket"
            raise InputRefused(f"this is {kind}, not a regular file")
        if info.st_size > limit:
            raise InputRefused(f"the file holds {info.st_size:,} bytes, more than the {limit:,} allowed")
        chunks: list[bytes] = []
        size = 0
        wanted = info.st_size + 1  # the whole file in one read: one buffer, never a second copy joined
        while size <= limit:
            chunk = os.read(descriptor, min(wanted, limit + 1 - size))
            wanted = 1 << 20  # it grew meanwhile
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise InputRefused(f"the file holds more than the {limit:,} bytes allowed")
        return b"".join(chunks)  # one chunk (the usual case): that very object, not a copy
    finally:
        os.close(descriptor)


def decode_utf8(data: bytes) -> str:
    """`data` as UTF-8 text (a leading BOM dropped); InputRefused naming the line, column and byte."""
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as error:
        start = error.start
        line = body.count(b"\n", 0, start) + 1
        column = start - (body.rfind(b"\n", 0, start) + 1) + 1
        raise NotUtf8(
            f"not UTF-8 text: byte 0x{body[start]:02X} at line {line}, column {column}; save the file as UTF-8",
            line,
            column,
        ) from None
