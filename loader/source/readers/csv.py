"""CSV files -> rows of text values.

Every value is text (leading zeros kept, a quote the loader put before formula-like text
dropped, see `rows.unneutralised`). The encoding is `encoding` when given, else told by a byte
order mark (UTF-8, UTF-16 or UTF-32), else UTF-8. The file is read without newline translation
(`newline=''`), so a CR LF inside a quoted field stays; a quote that is never closed is an error
at the line it opens instead of swallowing every following row; a byte order mark anywhere but
at the start (files joined together) is dropped. The delimiter is sniffed among , ; tab | unless
given. A file larger than `limits.CSV_BYTES` is refused before it is read; a line longer than
`limits.CSV_LINE_CHARS` before it is split into values, and a row wider than `limits.CSV_COLUMNS`
as soon as it is (a one-line file of millions of columns stops there, not at the memory's end).
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterable, Iterator
from pathlib import Path

from loader.errors import SheetError
from loader.places import CellRef
from loader.source.readers import limits
from loader.source.readers.kinds import Source, SourceKind, Wanted
from loader.source.readers.rows import SheetData, SheetRow, is_blank, unneutralised

SUFFIXES = frozenset({".csv", ".txt"})
SNIFF_DELIMITERS = ",;\t|"
# Longest first: the UTF-32 LE mark begins with the UTF-16 LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)


def read(path: Path, display: str, *, delimiter: str | None, encoding: str | None) -> SheetData:
    size = path.stat().st_size
    if size > limits.CSV_BYTES.value():
        raise limits.CSV_BYTES.refuse(f"the file holds {size:,} bytes", display)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SheetError(f"cannot read the file: {exc.strerror or exc}", where=display) from None
    text = _decode(data, display, encoding).replace("\ufeff", "")
    sep = delimiter or _sniff(text)
    rows: list[SheetRow] = []
    reader = csv.reader(_bounded_lines(io.StringIO(text, newline=""), display), delimiter=sep, strict=True)
    columns = limits.CSV_COLUMNS.value()
    number = 0
    started = 1  # the line the current record starts on
    try:
        for number, values in enumerate(reader, start=1):
            started = reader.line_num + 1
            if len(values) > columns:
                raise limits.CSV_COLUMNS.refuse(f"row {number} holds {len(values):,} values", display)
            normal = tuple(unneutralised(v) if v else None for v in values)
            if all(is_blank(v) for v in normal):
                continue
            rows.append(SheetRow(number, normal))
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            raise SheetError(
                f"a quoted value that starts on line {started} is never closed, so every following line "
                "would be read into it", where=CellRef(display, row=number + 1),
                hint="close the quote (a quote inside a quoted value is written twice: \"\")",
            ) from exc
        raise SheetError(f"malformed CSV (line {started}): {exc}", where=CellRef(display, row=number + 1),
                         hint="a quote inside a quoted value is written twice (\"\")") from exc
    return SheetData(display, None, tuple(rows))


def _bounded_lines(lines: Iterable[str], display: str) -> Iterator[str]:
    """The lines of the text, refused (SheetError) at the first one longer than the limit."""
    limit = limits.CSV_LINE_CHARS.value()
    for number, line in enumerate(lines, start=1):
        if len(line) > limit:
            raise limits.CSV_LINE_CHARS.refuse(f"line {number} holds {len(line):,} characters", display)
        yield line


def _decode(data: bytes, display: str, encoding: str | None) -> str:
    told = encoding is not None
    if encoding is None:
        encoding = next((name for bom, name in _BOMS if data.startswith(bom)), "utf-8-sig")
    try:
        text = data.decode(encoding)
        if not told and "\x00" in text:  # valid UTF-8, but text files hold no NUL: UTF-16 without a mark
            line = data.count(b"\n", 0, data.index(b"\x00")) + 1
            raise SheetError(f"the file holds NUL bytes (the first on line {line}), "
                             f"so it is not {'UTF-8' if encoding == 'utf-8-sig' else encoding} text",
                             where=display, hint=_encoding_hint(data))
        return text
    except UnicodeDecodeError as exc:
        raise SheetError(_undecodable(data, exc, encoding), where=display, hint=_encoding_hint(data)) from exc
    except LookupError as exc:
        raise SheetError(f"unknown encoding {encoding!r}", where=display) from exc


def _undecodable(data: bytes, exc: UnicodeDecodeError, encoding: str) -> str:
    start = exc.start
    line_start = data.rfind(b"\n", 0, start) + 1
    line = data.count(b"\n", 0, start) + 1
    column = len(data[line_start:start].decode(encoding, "replace")) + 1
    name = "UTF-8" if encoding in ("utf-8", "utf-8-sig") else encoding
    return f"cannot decode the file as {name}: line {line}, column {column} holds the byte 0x{data[start]:02X}"


def windows_1252_likely(data: bytes) -> bool:
    """Whether bytes that are not UTF-8 are Windows-1252 text: they hold bytes 0x80-0x9F, its curly
    quotes, dashes and euro sign (in latin-1 these would be C1 control characters, never text)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return any(0x80 <= byte <= 0x9F for byte in data)
    return False


def _encoding_hint(data: bytes) -> str:
    if data[:4096].count(b"\x00") > len(data[:4096]) // 8:
        return "the file looks like UTF-16 without a byte order mark: set `encoding: utf-16` in the mapping"
    if windows_1252_likely(data):
        return ("its bytes 0x80-0x9F are Windows-1252's curly quotes and dashes (a file saved by Excel on "
                "Windows): set `encoding: cp1252` in the mapping")
    return "save it as UTF-8, or set `encoding:` in the mapping (e.g. cp1252 for a file saved by Excel on Windows)"


def _sniff(text: str) -> str:
    sample = text[:64 * 1024]
    try:
        return csv.Sniffer().sniff(sample, delimiters=SNIFF_DELIMITERS).delimiter
    except csv.Error:
        first = sample.splitlines()[0] if sample else ""
        counts = {d: first.count(d) for d in SNIFF_DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        return best if counts[best] else ","


def _read_kind(source: Source, display: str, sheet: str | None, wanted: Wanted) -> SheetData:
    return read(source.path, display, delimiter=source.option("delimiter"), encoding=source.option("encoding"))


KIND = SourceKind("csv", _read_kind, SUFFIXES, advertised=(".csv",))
