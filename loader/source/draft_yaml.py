"""The text of a drafted mapping file (`loader init`): comments where a reviewer needs them.

Written by hand rather than by a YAML dumper, so that notes sit beside their fields and unmatched
columns appear as commented lines; every value is plain or JSON-quoted, which YAML reads back as is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from loader.source.draft import DraftBlock
from loader.source.draft_records import TreeSource


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value) and value.lower() not in (
        "true", "false", "yes", "no", "on", "off", "null", "y", "n"
    ):
        return value
    if isinstance(value, (date, datetime)):
        return json.dumps(value.isoformat())
    return json.dumps(value, ensure_ascii=False)


def _flow(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_scalar(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return _scalar(value)


def render_draft(blocks: Sequence[DraftBlock], *, source: str, schema_path: str, workbook: str,
                 reading: Mapping[str, str] | None = None, tree: TreeSource | None = None) -> str:
    """The mapping file's text: `$schema` line, a review note, the source and how to read it (a CSV
    file's `encoding:` and `delimiter:`, when not the defaults; a JSON or XML file's `sources:`
    entry, which each block names), then one block per sheet."""
    lines = [
        f"# yaml-language-server: $schema={schema_path}",
        "#",
        f"# Drafted by `loader init` from {workbook}. Review before you commit it:",
        "#   - every field's column (matched by name), the key, and `pii: true` on personal data;",
        "#   - columns no field matched are listed as comments under their block;",
        "#   - then `loader validate` this file and `loader plan` it.",
        "version: 1",
        *(_tree_lines(tree) if tree else [f"source: {_scalar(source)}"]),
        *(f"{name}: {_scalar(value)}" for name, value in (reading or {}).items()),
        "entities:",
    ]
    for n, block in enumerate(blocks):
        if n:
            lines.append("")
        lines += _block_lines(block, tree.name if tree else None)
    return "\n".join(lines) + "\n"


def _tree_lines(tree: TreeSource) -> list[str]:
    lines = ["sources:", f"  {_scalar(tree.name)}:", f"    {tree.kind}: {_scalar(tree.location)}",
             f"    records: {_scalar(tree.records)}"]
    if tree.namespaces:
        lines.append(f"    namespaces: {_flow(dict(tree.namespaces))}")
    return lines


def _block_lines(block: DraftBlock, source: str | None) -> list[str]:
    guessed = "   # guessed from the headers; --entity to choose" if block.entity_guessed else ""
    lines = [f"  {block.name}:", f"    entity: {block.entity}{guessed}"]
    if source is not None:
        lines.append(f"    source: {_scalar(source)}")
    if block.sheet is not None:
        lines.append(f"    sheet: {_scalar(block.sheet)}")
    if block.header_row != 1:
        lines.append(f"    header_row: {block.header_row}")
    lines += [f"    # {note}" for note in block.notes]
    choose = "   # CHOOSE: no column is unique; name the fields that identify a record" if block.key_unresolved else ""
    lines.append(f"    key: {_flow(list(block.key))}{choose}")
    lines.append("    fields:")
    for f in block.fields:
        note = f"   # {f.note}" if f.note else ""
        spec = dict(f.spec) if "template" in f.spec else {"column": f.column, **f.spec}
        lines.append(f"      {f.name}: {_flow(spec)}{note}")
    if block.custom:
        lines.append("      custom_attributes:")
        lines += [f"        {_scalar(label)}: {_flow({'column': column})}" for label, column in block.custom]
    if block.unmatched:
        lines.append("      # Columns no field matched (uncomment as custom attributes, or map them to a field):"
                     if block.custom_attributes else "      # Columns no field matched:")
        if block.custom_attributes:
            lines.append("      # custom_attributes:")
        for column in block.unmatched:
            extra = ", type: string" if column in block.numeric_unmatched else ""
            extra += ", pii: true" if column in block.pii_unmatched else ""
            lines.append(f"      #   {_scalar(column)}: {{column: {_scalar(column)}{extra}}}")
    return lines
