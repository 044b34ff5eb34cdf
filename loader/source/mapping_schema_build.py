"""The entity-specific rules of `schemas/mapping.schema.json`, made from the entity profile and the
entity schemas, so that an editor completes `entity:` and each block's `fields:` and flags a field
its entity does not have.

They are one line of the schema, the block's `allOf` (marked by its first element's `$comment`):
an `enum` of the entities the loader writes, then per entity an `if`/`then` naming its fields with
their descriptions. The loader's own checks say the same, better placed and worded (`mapping_builder`:
"unknown field 'first_name' for course; expected one of: …"), so these rules are marked
`x-editor-only` and `loader.yaml_files.schema_problems` leaves their errors out.

    python -m loader.source.mapping_schema_build     # rewrites the line after a profile change

A test checks the committed schema holds exactly what this makes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from loader.files.safe_write import write_text
from loader.profile import Profile, load_profile
from loader.source.entity_schemas import schema_of
from loader.yaml_files import EDITOR_ONLY

COMMENT = "generated from the entity profile: python -m loader.source.mapping_schema_build"
LINE_START = '      "allOf": [{"$comment": '
ANCHOR = '      "x-expected": "a block with `entity`, `key` and `fields`",\n'
SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schemas" / "mapping.schema.json"


def writable_entities(profile: Profile) -> list[str]:
    return sorted(name for name, entity in profile.entities.items() if entity.writable and schema_of(entity))


def entity_rules(profile: Profile) -> list[dict[str, Any]]:
    """The block's `allOf`: the entity names, then each entity's fields."""
    names = writable_entities(profile)
    rules: list[dict[str, Any]] = [
        {"$comment": COMMENT},
        {"properties": {"entity": {"enum": names, EDITOR_ONLY: True}}},
    ]
    for name in names:
        properties = (schema_of(profile.entity(name)) or {}).get("properties", {})
        fields = {
            field: {"description": str(spec.get("description", ""))} if spec.get("description") else {}
            for field, spec in properties.items()
        }
        rules.append({
            "if": {"properties": {"entity": {"const": name}}, "required": ["entity"]},
            "then": {"properties": {"fields": {
                "properties": fields,
                "propertyNames": {"enum": sorted(fields), EDITOR_ONLY: True},
            }}},
        })
    return rules


def rebuilt(text: str, profile: Profile) -> str:
    """The schema's text with its generated line made anew (added after the block's `x-expected`)."""
    line = f'      "allOf": {json.dumps(entity_rules(profile), ensure_ascii=False)},\n'
    lines = text.splitlines(keepends=True)
    for number, old in enumerate(lines):
        if old.startswith(LINE_START):
            lines[number] = line
            return "".join(lines)
    if ANCHOR not in text:
        raise ValueError("the block's `x-expected` line is not in the schema: update ANCHOR")
    return text.replace(ANCHOR, ANCHOR + line, 1)


def main() -> int:
    text = SCHEMA_FILE.read_text(encoding="utf-8")
    new = rebuilt(text, load_profile())
    json.loads(new)  # still JSON
    if new != text:
        write_text(SCHEMA_FILE, new, private=False)
        print(f"rewrote {SCHEMA_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
