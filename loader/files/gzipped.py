"""gzip for the loader's own large files (plan.json.gz): written deterministically, read with a limit.

`gzip_writer` compresses into an open binary file with no file name and no time in the gzip header,
so the same text gives the same bytes on every run. `is_gzip` tells gzip data by its magic bytes
(not by the file's name); `gunzip_limited` unpacks it whole, refusing (InputRefused) data that
unpacks to more than `limit` bytes (a gzip bomb stops there, nothing more is unpacked), a
truncated file and damaged data, each with a sentence for the user.
"""

from __future__ import annotations

import gzip
import io
import zlib
from typing import BinaryIO

from loader.files.inputs import InputRefused

GZIP_MAGIC = b"\x1f\x8b"
GZIP_LEVEL = 6  # zlib's default: a 250,000-record plan.json shrinks about tenfold
_PIECE = 1 << 20  # unpacked a mebibyte at a time, so the limit is checked before memory is spent


def is_gzip(data: bytes | bytearray) -> bool:
    return data[:2] == GZIP_MAGIC


def gzip_writer(handle: BinaryIO, level: int = GZIP_LEVEL) -> gzip.GzipFile:
    """A gzip stream into `handle` (closing it does not close `handle`); its header names no file and
    no time (mtime 0), so equal input gives equal bytes."""
    return gzip.GzipFile(filename="", mode="wb", compresslevel=level, fileobj=handle, mtime=0)


def gunzip_limited(data: bytes | bytearray, limit: int) -> bytearray:
    """`data` (gzip, one member or more) unpacked; InputRefused when it unpacks to more than `limit`
    bytes, ends early or is damaged."""
    unpacked = bytearray()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") as stream:
            while piece := stream.read(_PIECE):
                unpacked += piece
                if len(unpacked) > limit:
                    raise InputRefused(
                        f"it is gzip data that unpacks to more than the {limit:,} bytes allowed; "
                        "nothing more was unpacked"
                    )
    except EOFError:
        raise InputRefused("it is gzip data that ends early: the file is truncated (copied or written "
                           "only in part)") from None
    except (gzip.BadGzipFile, zlib.error) as error:
        raise InputRefused(f"it is gzip data that is damaged ({error})") from None
    return unpacked
