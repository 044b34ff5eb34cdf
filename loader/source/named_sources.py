"""A mapping's `sources:`: sources named once and read by blocks by name (contract section 4.2).

An entry's kind is told by the one key that is a kind's name (`table:` ...); the kind makes the
Source from the entry (`SourceKind.from_mapping`). A block's `source:` (or a lookup's) is a name
from here, or else a file's path as before. The Python API gives a named source in memory instead
(`given_sources`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from loader.errors import MappingError
from loader.findings import Finding
from loader.source.mapping import Block, FieldSpec, LoadedMapping, LookupSpec, Variant
from loader.source.readers import KINDS, Source, file_source, kind_for, named_kinds
from loader.suggestions import did_you_mean
from loader.yaml_files import MarkedDocument


def named_sources(doc: MarkedDocument, folder: Path, findings: list[Finding]) -> dict[str, Source | None]:
    """The sources of the document's `sources:`, by name; a finding for each entry naming no kind (or
    two), which is there as None (the blocks reading it are not read as files of that name)."""
    found: dict[str, Source | None] = {}
    for name, entry in (doc.data.get("sources") or {}).items():
        kinds = [key for key in entry if key in KINDS and KINDS[key].from_mapping is not None]
        if len(kinds) != 1:
            known = named_kinds()
            what = "names no kind of source" if not kinds else f"names {len(kinds)} kinds ({', '.join(kinds)})"
            findings.append(Finding("error", "source-kind", f"source {name!r} {what}: give one of "
                                    f"{', '.join(known)}" + did_you_mean(next(iter(entry), ""), known),
                                    doc.place(("sources", name), key=True)))
            found[name] = None
            continue
        kind = KINDS[kinds[0]]
        unknown = [key for key in entry if key != kind.name and key not in kind.options]
        if unknown:
            allowed = sorted(kind.options)
            findings.append(Finding("error", "source-option", f"source {name!r}: a {kind.name} source takes no "
                                    f"{unknown[0]!r}" + (f"; its options are: {', '.join(allowed)}" if allowed else "")
                                    + did_you_mean(unknown[0], allowed), doc.place(("sources", name, unknown[0]),
                                                                                  key=True)))
            found[name] = None
            continue
        assert kind.from_mapping is not None
        try:
            found[name] = kind.from_mapping(name, dict(entry), folder)
        except MappingError as exc:
            findings.append(Finding("error", "source-option", exc.message + (f" ({exc.hint})" if exc.hint else ""),
                                    doc.place(("sources", name), key=True)))
            found[name] = None
    return found


def source_named(text: str, sources: Mapping[str, Source | None], folder: Path, *, delimiter: str | None = None,
                 encoding: str | None = None) -> Source | None:
    """What a block's (or a lookup's) `source:` names: a source of `sources:` (None: one found wrong),
    else a file (relative to the mapping's folder) read with the delimiter and encoding given."""
    if text in sources:
        return sources[text]
    return file_source(folder / text, delimiter=delimiter, encoding=encoding)


def with_given(loaded: Sequence[LoadedMapping], given: Mapping[str, Source]) -> list[LoadedMapping]:
    """The mappings with the sources `given` in place of their named sources (`given_sources`); a
    name no mapping's block or lookup reads is an error (a typo would plan from the mapping's own)."""
    named = {source.name for one in loaded if one.mapping is not None for block in one.mapping.blocks
             for source in (block.source, *(f.lookup.source for f in _every_field(block)
                                            if f.lookup is not None and f.lookup.source is not None))
             if source.name is not None}
    for name in given:
        if name not in named:
            raise MappingError(f"a table is given for the source {name!r}, which no block of the mappings reads"
                               + did_you_mean(name, sorted(named)),
                               hint="give tables by the names of the mappings' sources:" if named
                               else "name the source in the mapping's sources: and read it from a block")
    return [given_sources(one, given) for one in loaded]


def _every_field(block: Block) -> tuple[FieldSpec, ...]:
    return (*block.fields, *(spec for variant in block.repeats for spec in variant.fields))


def given_sources(loaded: LoadedMapping, given: Mapping[str, Source]) -> LoadedMapping:
    """The mapping with each source named in `given` (a name of its `sources:`) read from the source
    given instead (the Python API's in-memory tables); the places keep naming it by its name."""
    if loaded.mapping is None or not given:
        return loaded

    def swapped(source: Source) -> Source:
        if source.name is None or source.name not in given:
            return source
        return replace(given[source.name], name=source.name)

    blocks = tuple(_with_sources(block, swapped) for block in loaded.mapping.blocks)
    return replace(loaded, mapping=replace(loaded.mapping, blocks=blocks))


def _with_sources(block: Block, swapped: Callable[[Source], Source]) -> Block:
    def spec(field: FieldSpec) -> FieldSpec:
        lookup = field.lookup
        if lookup is None or lookup.source is None:
            return field
        return replace(field, lookup=LookupSpec(swapped(lookup.source), lookup.sheet, lookup.key, lookup.value,
                                                lookup.place))

    source = swapped(block.source)
    repeats = tuple(Variant(v.repeat, tuple(map(spec, v.fields)), v.where) for v in block.repeats)
    return replace(block, source=source, source_display=kind_for(source).describe(source),
                   fields=tuple(map(spec, block.fields)), repeats=repeats)
