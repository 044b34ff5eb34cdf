"""Reading a mapping file: YAML with places, checked against the mapping schema, then each block
built (`mapping_builder`).

Loading never stops at the first problem: `load_mapping` returns the blocks it could build and
every problem found; `read_mapping` does the same from one read of the file, with the fingerprint
of the bytes it parsed.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from functools import cache
from pathlib import Path
from typing import Any

from loader.files.fingerprints import display_path
from loader.files.inputs import read_regular_file
from loader.files.package_data import schema as package_schema
from loader.findings import Finding
from loader.places import MappingPlace
from loader.profile import Profile
from loader.source.mapping import LoadedMapping, Mapping
from loader.source.mapping_builder import BlockBuilder, error
from loader.source.readers import kind_of
from loader.yaml_files import (
    MarkedDocument,
    Path_,
    YamlSyntaxError,
    decode_yaml_text,
    load_marked,
    schema_problems,
)


@cache
def mapping_schema() -> dict[str, Any]:
    return package_schema("mapping.schema.json")


def read_mapping(path: Path, profile: Profile) -> LoadedMapping:
    """The mapping file at `path`, opened once. Raises OSError when it cannot be read at all."""
    data = read_regular_file(path)
    mapping, findings = _parse_mapping(path, data, profile)
    return LoadedMapping(path, mapping, tuple(findings), f"sha256:{hashlib.sha256(data).hexdigest()}")


def load_mapping(path: Path, profile: Profile) -> tuple[Mapping | None, list[Finding]]:
    """The mapping file's blocks that are valid, and a Finding for every problem (file:line:col).

    Raises OSError when the file cannot be read at all.
    """
    loaded = read_mapping(path, profile)
    return loaded.mapping, list(loaded.findings)


def _parse_mapping(path: Path, data: bytes, profile: Profile) -> tuple[Mapping | None, list[Finding]]:
    display = display_path(path)
    source = _source_given_as_mapping(path, data, display)
    if source is not None:
        return None, [source]
    try:
        doc = load_marked(decode_yaml_text(data, display), display)
    except YamlSyntaxError as exc:
        return None, [error("mapping-yaml", exc.message, exc.place)]
    findings = [error("mapping-yaml", message, place) for place, message in doc.problems]
    problems = schema_problems(doc, mapping_schema())
    findings += [error("mapping-schema", message, place) for _, place, message in problems]
    if not isinstance(doc.data, dict) or any(len(p) < 2 or p[0] != "entities" for p, _, _ in problems):
        return None, _in_file_order(findings)
    broken = {p[1] for p, _, _ in problems}
    builder = BlockBuilder(doc, path, profile, findings)
    blocks = [
        block
        for name in doc.data["entities"]
        if name not in broken and (block := builder.block(name)) is not None
    ]
    for name in (name for name in doc.data["entities"] if name in broken):  # checked, never planned
        pruned = _without_refused_options(doc, name, [p for p, _, _ in problems])
        if pruned is not None:
            BlockBuilder(pruned, path, profile, findings).block(name)
    return Mapping(path, display, tuple(blocks)), _in_file_order(findings)


def _without_refused_options(doc: MarkedDocument, name: str, problem_paths: list[Path_]) -> MarkedDocument | None:
    """`doc` with block `name`'s options the schema refused left out of its fields' specs (a typo'd
    `tranform:`, a `type: 5`), so that one such option does not hide the block's other problems;
    None when a problem lies elsewhere in the block (its key, its source, a field as a whole)."""
    paths = [p[2:] for p in problem_paths if p[1] == name]
    block = copy.deepcopy(doc.data["entities"][name])
    for steps in paths:
        depth = 4 if steps[:2] == ("fields", "custom_attributes") else 3
        if len(steps) < depth or steps[0] != "fields":
            return None
        parent = block
        for step in steps[: depth - 1]:
            parent = parent.get(step) if isinstance(parent, dict) else None
        if not isinstance(parent, dict):
            return None
        parent.pop(steps[depth - 1], None)
    entities = {**doc.data["entities"], name: block}
    pruned = dataclasses.replace(doc, data={**doc.data, "entities": entities})
    if any(p[1] == name for p, _, _ in schema_problems(pruned, mapping_schema()) if len(p) > 1):
        return None
    return pruned


# A workbook's first bytes: a zip package (.xlsx, .xlsm) or an OLE compound file (.xls).
_WORKBOOK_SIGNATURES = (b"PK\x03\x04", b"\xd0\xcf\x11\xe0")


def _source_given_as_mapping(path: Path, data: bytes, display: str) -> Finding | None:
    """A spreadsheet named where a mapping file belongs (`loader plan units.xlsx`): said as what it
    is, with the command that drafts a mapping for it, rather than as YAML that does not parse."""
    kind = kind_of(path)
    if kind is None and not data.startswith(_WORKBOOK_SIGNATURES):
        return None
    what = "a workbook" if kind is None or kind.has_sheets else f"a {kind.name.upper()} file"
    return error(
        "mapping-is-a-source",
        f"{display} is {what}, a source of records, not a mapping file: draft a mapping for it with "
        f"`loader init {display}`, then plan that mapping (`loader plan mappings/{path.stem}.yaml`)",
        MappingPlace(display, 1, 1),
    )


def _in_file_order(findings: list[Finding]) -> list[Finding]:
    def position(f: Finding) -> tuple[int, int]:
        return (f.where.line, f.where.col) if isinstance(f.where, MappingPlace) else (0, 0)

    return sorted(findings, key=position)
