"""A case's rows in place of a block's source: the blocks of a mapping as a test reads them.

The blocks over the tested block's sheet (or source) keep everything but where their rows come
from: a table source holding the case's `given` rows, or, for a JSON or XML source, the case's
document written to a file of the case's own folder and read by the same reader with the same
`records:` path. Lookups the case gives are tables too; the others read the committed files.
The blocks' record-level checks judge the given records as they judge a source's (an error check
is an error a case expects or fails on); checks of the whole set (`rows`, `unique`, `max_share`)
and `every`, which judge a whole source, do not judge a case's few rows. Nothing here reads a
service or the real source.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from pathlib import Path

from loader.errors import MappingError
from loader.files.safe_write import write_text
from loader.source.mapping import Block, FieldSpec, LookupSpec, Variant
from loader.source.readers import Source
from loader.source.readers.kinds import options_of
from loader.source.readers.table import table

from .cases import TestCase, TestFile

GIVEN = "given"  # how the given rows are named in places: `given › B2`
_FEED_KINDS = {"json": ("given_json", ".json"), "xml": ("given_xml", ".xml")}


def sheet_group(blocks: tuple[Block, ...], tested: Block) -> tuple[Block, ...]:
    """The blocks read with `tested`: those over the same source and sheet, in mapping order."""
    return tuple(b for b in blocks if b.source.identity == tested.source.identity and b.sheet == tested.sheet)


def tested_block(test: TestFile, blocks: tuple[Block, ...]) -> Block:
    """The block the test names, or the mapping's only group of blocks when it names none."""
    if test.block is not None:
        found = next((b for b in blocks if b.name == test.block), None)
        if found is None:
            names = ", ".join(b.name for b in blocks) or "none"
            raise MappingError(f"the mapping has no valid block {test.block!r} (its blocks: {names})",
                               where=test.place, hint="name a block of the mapping in `block:`")
        return found
    if not blocks:
        raise MappingError("the mapping has no valid block to test", where=test.place)
    if len(sheet_group(blocks, blocks[0])) != len(blocks):
        raise MappingError("the mapping's blocks read several sheets: say which one the test is about",
                           where=test.place, hint=f"add `block: {blocks[0].name}`")
    return blocks[0]


def given_blocks(group: tuple[Block, ...], case: TestCase, folder: Path) -> tuple[Block, ...]:
    """`group` reading the case's rows (or document) instead of their source, with the case's lookups.

    `folder` is where a JSON or XML document is written for its reader (the case's own folder).
    """
    source = _given_source(group[0], case, folder)
    tables = {name.casefold(): (name, pairs) for name, pairs in case.lookups}
    tabular = source.kind == "table"
    return tuple(
        _with_lookups(replace(b, source=source, source_display=GIVEN, sheet=None if tabular else b.sheet,
                              header_row=1 if tabular else b.header_row,
                              header_auto=False if tabular else b.header_auto,
                              checks=tuple(c for c in b.checks if c.record_level and c.kind != "every")), b, tables)
        for b in group
    )


def _given_source(block: Block, case: TestCase, folder: Path) -> Source:
    feed = _FEED_KINDS.get(block.source.kind)
    if feed is None:
        if case.given_json is not None or case.given_xml is not None:
            raise MappingError(f"case {case.name!r} gives a JSON or XML document, but block {block.name!r} reads "
                               "a table", where=case.place, hint="give its rows in `given:`")
        return table(GIVEN, case.given)
    key, suffix = feed
    document = case.given_json if key == "given_json" else case.given_xml
    if document is None:
        raise MappingError(f"case {case.name!r} gives no `{key}:`, and block {block.name!r} reads a "
                           f"{block.source.kind.upper()} source", where=case.place,
                           hint=f"give the document the source would hold in `{key}:`")
    path = folder / f"{GIVEN}{suffix}"
    write_text(path, document if isinstance(document, str) else json.dumps(document), private=False)
    kept = {name: value for name, value in block.source.options if name in ("records", "namespaces")}
    return Source(block.source.kind, str(path), options_of({**kept, "base": str(folder), "allow_empty": True}),
                  name=GIVEN)


Tables = dict[str, tuple[str, tuple[tuple[str, str], ...]]]  # folded name -> (name, (key, value) pairs)


def _with_lookups(block: Block, original: Block, tables: Tables) -> Block:
    """`block` with each lookup the case gives read from its table, and the others from the
    committed file (a lookup in the block's own workbook keeps reading that workbook)."""

    def swapped(spec: FieldSpec) -> FieldSpec:
        lookup = spec.lookup
        if lookup is None:
            return spec
        given = _given_table(lookup, original.source, tables)
        if given is not None:
            return replace(spec, lookup=replace(lookup, source=given, sheet=None))
        return replace(spec, lookup=replace(lookup, source=lookup.source or original.source,
                                            sheet=lookup.sheet or (None if lookup.source else original.sheet)))

    repeats = tuple(Variant(v.repeat, tuple(map(swapped, v.fields)), v.where) for v in block.repeats)
    return replace(block, fields=tuple(map(swapped, block.fields)), repeats=repeats)


def _given_table(lookup: LookupSpec, original: Source, tables: Tables) -> Source | None:
    """The case's table for `lookup`, named as its sheet or as its file (without the suffix), with
    the lookup's key and value columns."""
    source = lookup.source or original
    names = [lookup.sheet, Path(source.location).stem if source.kind != "table" else source.location]
    found = next((tables[n.casefold()] for n in names if n and n.casefold() in tables), None)
    if found is None:
        return None
    name, pairs = found
    return _table(name, lookup.key, lookup.value, pairs)


@cache
def _table(name: str, key: str, value: str, pairs: tuple[tuple[str, str], ...]) -> Source:
    """One table per name and columns, so the blocks' lookups of it read it once."""
    return table(name, [{key: k, value: v} for k, v in pairs])
