"""Blocks of a worksheet's XML, and which blocks of plain rows the sheet-XML pass may leave unparsed.

Calling Python for every element of a 200,000-row sheet would cost several times the value read,
so `xlsx_parts` hands blocks that hold only plain rows (no formula, error, special style, merge,
entity or character reference, namespace declaration, cell or row without its `r`, column beyond
ZZ) past the parser; removing whole rows keeps the document well-formed, and such a block adds
only its extent to the bounds, which these byte searches give.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Protocol


class ScanState(Protocol):
    """What the block test reads from, and reports to, the sheet scan."""

    padded_styles: dict[str, int]
    dated_styles: set[str]
    rich_strings: dict[int, str]
    max_col: int

    def skipped_rows(self, first_row: int, last_row: int, widest: int) -> None: ...


def column_index(letters: bytes | str) -> int:
    """"A" -> 0, "AA" -> 26."""
    if isinstance(letters, bytes):
        letters = letters.decode("ascii")
    index = 0
    for ch in letters.upper():
        index = index * 26 + (ord(ch) - 64)
    return index - 1


_ROW_END = re.compile(rb"</(?:[A-Za-z_][\w.-]*:)?row\s*>")


def row_blocks(chunks: Iterator[bytes]) -> Iterator[tuple[bytes, bool]]:
    """The part in blocks of about `_BLOCK` bytes, each with True when it ends just after a row's end tag.

    The first block ends after the first row: the parser must see the sheet's head before any block
    can be left out, and a whole first megabyte through the parser cost more than the rest together.
    """
    rest = b""
    head = True
    for chunk in chunks:
        data = rest + chunk if rest else chunk
        if head:
            first_end = _ROW_END.search(data)
            if first_end is None and len(data) < 4 * _BLOCK:
                rest = data
                continue
            head = False
            if first_end is not None:
                yield data[:first_end.end()], True
                data = data[first_end.end():]
        if len(data) < _BLOCK:
            rest = data
            continue
        ends = [m.end() for m in _ROW_END.finditer(data, max(0, len(data) - (64 << 10)))]
        ends = ends or [m.end() for m in _ROW_END.finditer(data)]
        if not ends:
            if len(data) > 4 * _BLOCK:  # no row end in sight: parse it as it comes
                yield data, False
                data = b""
            rest = data
            continue
        yield data[:ends[-1]], True
        rest = data[ends[-1]:]
    if rest:
        # The rows up to the last row end may still be left out; only the sheet's tail must be parsed.
        ends = [m.end() for m in _ROW_END.finditer(rest, max(0, len(rest) - (64 << 10)))]
        if ends:
            yield rest[:ends[-1]], True
            rest = rest[ends[-1]:]
        yield rest, False


_BLOCK = 1 << 20


class PlainRows:
    """Decides by byte searches whether a block of rows may be left out of the parse (see `xlsx_parts._parse_stream`).

    Every search errs towards parsing: a needle that also matches something harmless only costs time.
    """

    def __init__(self, prefix: str, scan: ScanState):
        p = (f"{prefix}:" if prefix else "").encode()
        self.scan = scan
        self.off = False
        self.cell, self.row = b"<" + p + b"c ", b"<" + p + b"row "
        self.any_cell, self.any_row = b"<" + p + b"c", b"<" + p + b"row"
        self.refuse = [
            b"<" + p + b"f", b"&", b"xmlns", b"sheetData", b"mergeCell",
            b'"e"', b"'e'",  # t="e": an error value
            b"<" + p + b"r>",  # a run of rich text, whose spaces calamine may trim
        ]
        if scan.rich_strings:
            self.refuse += [b't="s"', b"t='s'"]  # a cell may show a shared rich text calamine trims
        for style in scan.padded_styles:
            self.refuse += [b's="' + style.encode() + b'"', b"s='" + style.encode() + b"'"]
        # A date style matters only on a serial below 1 (see `_early_date`).
        dated = b"|".join(x.encode() for x in sorted(scan.dated_styles))
        self.small = re.compile(rb's="(?:' + dated + rb')"[^>]*>\s*<' + re.escape(p)
                                + rb"v>\s*(?:-|0[<.]|\.|[0-9.]+[eE]-)") if dated else None
        self.first_row = re.compile(re.escape(self.row) + rb'[^>]*?\br="([0-9]+)"')

    def skips(self, block: bytes) -> bool:
        if self.off:
            return False
        if _holds(block, b"<!") or _holds(block, b"<?"):
            # A comment, CDATA section or processing instruction may hold a "</row>" that a block was
            # cut at: from here on every block goes through the parser.
            self.off = True
            return False
        if any(_holds(block, needle) for needle in self.refuse):
            return False
        if self.small is not None and self.small.search(block):
            return False
        # Every cell and row must carry its r (else its position is unknown), spelt as the searches expect.
        cells, rows = block.count(self.cell), block.count(self.row)
        if cells != block.count(self.any_cell) or rows != block.count(self.any_row):
            return False
        if cells + rows != block.count(b' r="'):
            return False
        first = self.first_row.search(block)
        last = self.first_row.search(block, block.rfind(self.row))
        if first is None or last is None:
            return not block.strip()
        widest = _widest_column(block, self.scan.max_col)
        if widest is None:
            return False
        self.scan.skipped_rows(int(first.group(1)), int(last.group(1)), widest)
        return True


# A byte of a needle that sheet XML seldom holds: where it is absent, so is the needle, and a search
# for one byte (memchr) is far cheaper than one for "<!" (a "<" starts every tag).
_GUARDS = {b"<!": b"!", b"<?": b"?", b"'e'": b"'"}


def _holds(block: bytes, needle: bytes) -> bool:
    guard = _GUARDS.get(needle)
    return (guard is None or guard in block) and needle in block


_WIDE = re.compile(rb'r="[A-Za-z]{3}')
_TWO_LETTERS = re.compile(rb'r="[A-Za-z]{2}[0-9]')
_TWO_LETTERS_FOUND = re.compile(rb'r="([A-Za-z]{2})[0-9]')


def _widest_column(block: bytes, known: int) -> int | None:
    """The largest 0-based column of a block's cells, or `known` when none lies beyond it (one search
    in the usual case); None when a reference has three letters (the block is then parsed)."""
    if known >= 25:
        if _WIDE.search(block):
            return None
        found = [column_index(pair) for pair in set(_TWO_LETTERS_FOUND.findall(block))]
        return max(found) if found else known
    beyond = chr(66 + known) if known >= 0 else "A"
    if not re.search(f'r="(?:[{beyond}-Z{beyond.lower()}-z][0-9]|[A-Za-z]{{2}})'.encode(), block):
        return known
    if _WIDE.search(block):
        return None
    if _TWO_LETTERS.search(block):
        return max(column_index(pair) for pair in set(_TWO_LETTERS_FOUND.findall(block)))
    low, high = 0, 25  # one letter: a binary search over letter ranges, five searches
    while low < high:
        middle = (low + high + 1) // 2
        upper, lower = chr(65 + middle), chr(97 + middle)
        if re.search(f'r="[{upper}-Z{lower}-z][0-9]'.encode(), block):
            low = middle
        else:
            high = middle - 1
    return low
