"""A block's header row in its sheet: the row read (given, or found by `header_row: auto`), where
each column the block names is, and what is wrong with it for this block.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from loader.findings import Finding
from loader.places import MappingPlace
from loader.source.headers import SCAN_ROWS, Header, find_header_row
from loader.source.mapping import Block
from loader.source.readers import SheetData, SheetRow
from loader.suggestions import did_you_mean


def wanted_columns(block: Block) -> list[tuple[str, MappingPlace]]:
    """Every column a block names, with the place in the mapping that names it, in mapping order."""
    wanted: list[tuple[str, MappingPlace]] = []
    for variant in block.variants:
        wanted += [(c.column, c.place) for c in variant.where]
        for s in variant.fields:
            wanted += [(column, s.column_place or s.place) for column in s.columns]
            wanted += [(c.column, c.place) for c in s.when]
    if block.renamed is not None and block.renamed.column is not None:
        wanted.append((block.renamed.column, block.renamed.place))
    return wanted


def _holds_hint(row: int | None) -> str:
    if row is None:
        return ""
    return f"; row {row} holds every column this block names: set `header_row: {row}` (or `header_row: auto`)"


@dataclass(frozen=True)
class BlockHeader:
    block: Block
    data: SheetData
    wanted: tuple[tuple[str, MappingPlace], ...]
    header: Header | None  # None: no header row
    number: int  # the header row read (the one found, for `header_row: auto`)

    @staticmethod
    def of(block: Block, data: SheetData) -> BlockHeader:
        wanted = tuple(wanted_columns(block))
        row = _header_row(block, data, [name for name, _ in wanted])
        return BlockHeader(block, data, wanted, Header.of(row) if row else None,
                           row.number if row else block.header_row)

    @property
    def columns(self) -> Mapping[str, int]:
        return self.header.columns if self.header else {}

    def problems(self) -> list[Finding]:
        """A missing header row, columns the mapping names but the sheet lacks (with the row that
        holds them, when one near the top does), and columns it uses whose header occurs twice."""
        block, where = self.block, self._where()
        block_place = block.header_place or block.place
        names = [name for name, _ in self.wanted]
        elsewhere = None if block.header_auto else self._row_holding(names)
        if self.header is None:
            if block.header_auto:
                return [Finding("error", "header-missing", f"no header row in the first {SCAN_ROWS} rows of {where}; "
                                "set `header_row:` to the row holding the column names", block_place)]
            return [Finding("error", "header-missing", f"header row {block.header_row} of {where} is empty"
                            + _holds_hint(elsewhere), block_place)]
        missing = self.header.lacks(names)
        if missing and elsewhere is not None:
            shown = ", ".join(repr(c) for c in missing[:5])
            shown += f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            return [Finding("error", "header-elsewhere",
                            f"header row {self.number} of {where} lacks {len(missing)} of the columns this block "
                            f"names ({shown}){_holds_hint(elsewhere)}", block_place)]
        reported: set[str] = set()
        return self._missing(self.header, reported) + self._repeated(self.header, reported)

    def _where(self) -> str:
        return f"{self.data.file} › {self.data.sheet}" if self.data.sheet else self.data.file

    def _missing(self, header: Header, reported: set[str]) -> list[Finding]:
        present = header.names()
        how = ", found by `header_row: auto`" if self.block.header_auto else ""
        problems: list[Finding] = []
        for column, place in self.wanted:
            if column in header.columns or column in reported:
                continue
            reported.add(column)
            problems.append(Finding(
                "error", "column-missing",
                f"no column {column!r} in {self._where()} (header row {self.number}{how}); "
                f"the columns are: {', '.join(repr(c) for c in present)}{did_you_mean(column, present)}",
                place,
            ))
        return problems

    def _repeated(self, header: Header, reported: set[str]) -> list[Finding]:
        problems: list[Finding] = []
        for column, place in self.wanted:
            at = header.repeated.get(column)
            if at is None or column in reported:
                continue
            reported.add(column)
            cells = [str(self.data.cell(self.number, i)) for i in at]
            picks = " or ".join(f"{column}#{k}" for k in range(1, len(at) + 1))
            problems.append(Finding(
                "error", "column-repeated",
                f"the header {column!r} occurs {len(at)} times: {' and '.join(cells)}; name the one to read as "
                f"{picks} (in the order of the columns), or rename one of them in the sheet",
                place,
            ))
        return problems

    def _row_holding(self, names: list[str]) -> int | None:
        """The number of another row near the top holding every column named, if the header row does not."""
        if self.header is not None and not self.header.lacks(names):
            return None
        for row in self.data.rows[:SCAN_ROWS]:
            if row.number != self.block.header_row and not Header.of(row).lacks(names):
                return row.number
        return None


def _header_row(block: Block, data: SheetData, wanted: list[str]) -> SheetRow | None:
    rows = data.rows
    if not block.header_auto:
        return next((r for r in rows if r.number == block.header_row), None)
    scores = [(len(wanted) - len(Header.of(row).lacks(wanted)), -i, row) for i, row in enumerate(rows[:SCAN_ROWS])]
    best = max(scores, default=None, key=lambda s: s[:2])
    if best is None or best[0] == 0:
        return find_header_row(rows)
    return best[2]  # every column named, or the row holding most of them (the others are reported missing)
