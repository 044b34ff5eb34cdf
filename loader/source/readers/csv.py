"""CSV files -> rows of text values.

Every value is text (leading zeros kept, a quote the loader put before formula-like text
dropped, see `rows.unneutralised`); UTF-8 with
or without BOM unless `encoding` says otherwise; the delimiter is sniffed among , ; tab | unless
given.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from loader.errors import SheetError
from loader.source.readers.rows import SheetData, SheetRow, is_blank, unneutralised

SUFFIXES = frozenset({".csv", ".txt"})
SNIFF_DELIMITERS = ",;\t|"


def read(path: Path, display: str, *, delimiter: str | None, encoding: str | None) -> SheetData:
    try:
        text = path.read_text(encoding=encoding or "utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SheetError(
            f"cannot decode the file as {encoding or 'UTF-8'} (byte {exc.start})",
            where=display,
            hint="save it as UTF-8, or set `encoding:` in the mapping (e.g. cp1252)",
        ) from exc
    except LookupError as exc:
        raise SheetError(f"unknown encoding {encoding!r}", where=display) from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    sep = delimiter or _sniff(text)
    rows: list[SheetRow] = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    try:
        for number, values in enumerate(reader, start=1):
            normal = tuple(unneutralised(v) if v else None for v in values)
            if all(is_blank(v) for v in normal):
                continue
            rows.append(SheetRow(number, normal))
    except csv.Error as exc:
        raise SheetError(f"malformed CSV: {exc}", where=f"{display} › row {reader.line_num}") from exc
    return SheetData(display, None, tuple(rows))


def _sniff(text: str) -> str:
    sample = text[:64 * 1024]
    try:
        return csv.Sniffer().sniff(sample, delimiters=SNIFF_DELIMITERS).delimiter
    except csv.Error:
        first = sample.splitlines()[0] if sample else ""
        counts = {d: first.count(d) for d in SNIFF_DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        return best if counts[best] else ","
