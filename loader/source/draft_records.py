"""A JSON or XML file read for drafting a mapping (`loader init FILE --records PATH`).

A tree has no header row: the paths to the values of its first records stand for one
(`json_feed.record_paths`, `xml_feed.record_paths`), each read as a column labelled by its words
(`primaryCode.code` -> `primaryCode code`, `dc:identifier[2]` -> `identifier 2`) so the draft
matches them to an entity's fields as it matches a sheet's headers; the drafted fields then name
the paths themselves.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from loader.errors import UsageError
from loader.source.draft import DraftBlock
from loader.source.draft_sample import Sample
from loader.source.readers import SheetData, json_feed, xml_feed
from loader.source.readers.record_rows import FieldPaths

RECORDS_LISTED = 50  # the records whose paths become the draft's columns
KINDS = {**dict.fromkeys(json_feed.SUFFIXES, "json"), **dict.fromkeys(xml_feed.SUFFIXES, "xml")}


@dataclass(frozen=True)
class TreeSource:
    """The named source a drafted mapping reads: `sources: {NAME: {KIND: LOCATION, records: …}}`."""

    name: str
    kind: str  # json or xml
    location: str  # as the mapping file spells it (relative to its folder)
    records: str
    namespaces: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TreeRead:
    """The records read as a sheet (row 1 the paths' labels) and each label's path."""

    source: TreeSource
    data: SheetData
    paths: Mapping[str, str]  # label -> path


def read_tree(path: Path, records: str, location: str) -> TreeRead:
    """The file's records as a sheet of the paths found in its first records. UsageError for a file
    that is neither JSON nor XML, or whose records hold no value; SheetError for one that cannot be read."""
    kind = KINDS.get(path.suffix.lower())
    if kind is None:
        raise UsageError(f"{path}: --records reads a JSON (.json, .jsonl, .ndjson) or XML (.xml) file",
                         hint="drop --records to draft from a workbook or CSV file")
    name = re.sub(r"[^0-9a-z]+", "_", path.stem.lower()).strip("_") or "records"
    base = path.resolve().parent
    if kind == "json":
        feed = json_feed.JsonSource(name, path.name, base, records)
        listed = json_feed.record_paths(feed, RECORDS_LISTED)
        namespaces: dict[str, str] = {}
    else:
        namespaces = xml_feed.document_namespaces(path, str(path))
        xml = xml_feed.XmlSource(name, path.name, base, records, namespaces)
        listed = xml_feed.record_paths(xml, RECORDS_LISTED)
    if not listed:
        raise UsageError(f"{path}: the records path {records!r} finds no record holding a value",
                         hint="check --records against the file (JSON: \"$.items[*]\"; XML: \"//x:course\")")
    paths = _labelled(listed)
    fields = [FieldPaths(label, (p,)) for label, p in paths.items()]
    if kind == "json":
        data: SheetData = json_feed.read(feed, fields)
    else:
        data = xml_feed.read(xml, fields)
    return TreeRead(TreeSource(name, kind, location, records, namespaces), data, paths)


def _labelled(paths: tuple[str, ...]) -> dict[str, str]:
    """Each path under a label: its last name (`primaryCode.code` -> `code`; `name[0].value` -> `name`,
    a generic last name giving way to the one before), or, where shorter paths took that label,
    all its names (`qualification title`), or the path itself."""
    labelled: dict[str, str] = {}
    for path in sorted(paths, key=lambda p: (len(_words(p)), paths.index(p))):
        words = _words(path)
        short = words[-2] if len(words) > 1 and words[-1].lower() in _GENERIC else words[-1] if words else path
        label = next(text for text in (short, " ".join(words), path) if text and text not in labelled)
        labelled[label] = path
    order = {path: n for n, path in enumerate(paths)}
    return dict(sorted(labelled.items(), key=lambda item: order[item[1]]))


_GENERIC = frozenset({"value", "text", "content", "label", "string"})


def _words(path: str) -> list[str]:
    """A word for each step of a path: its name without prefix or `@`, with its position but the
    first item's index (`dc:identifier[2]` -> `identifier 2`, `name[0]` -> `name`)."""
    words = []
    for step in re.split(r"[./]", path):
        found = re.fullmatch(r"@?(?:[A-Za-z_][\w\-]*:)?(.*?)(?:\[(\d+)\])?", step)
        if found and found[1]:
            words.append(found[1] + (f" {found[2]}" if found[2] and found[2] != "0" else ""))
    return words


def with_paths(block: DraftBlock, sample: Sample, paths: Mapping[str, str]) -> tuple[DraftBlock, Sample]:
    """The block drafted from labels and its sample, naming the paths instead."""
    def path(label: str) -> str:
        return paths.get(label, label)

    named = replace(sample, headers=tuple(map(path, sample.headers)),
                    columns={path(k): v for k, v in sample.columns.items()}, unique=frozenset(map(path, sample.unique)),
                    filled={path(k): v for k, v in sample.filled.items()})
    return replace(
        block,
        fields=tuple(replace(f, column=path(f.column)) for f in block.fields),
        unmatched=tuple(map(path, block.unmatched)),
        pii_unmatched=frozenset(map(path, block.pii_unmatched)),
        numeric_unmatched=frozenset(map(path, block.numeric_unmatched)),
        custom=tuple((label, path(column)) for label, column in block.custom),
    ), named
