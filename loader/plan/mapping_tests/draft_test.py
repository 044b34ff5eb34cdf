"""The first test `loader init` writes beside a draft mapping: synthetic rows shaped like the
sheet's first three, and the records the draft builds from them, marked `draft: true`.

No value of the sheet is copied: each letter and digit of a sample value is replaced (a code
`MATH1001` becomes another code of the same shape), a date becomes a date of 2000, a number
another number. Only the values of a `map:` of a field that is not personal are kept, as the
map names them. The test passes as written; it is a person's to make it say what the mapping
must do (then they remove `draft: true`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from loader.files.fingerprints import display_path
from loader.places import MappingPlace
from loader.profile import Profile
from loader.source.draft import DraftBlock
from loader.source.draft_sample import Sample
from loader.source.mapping import Block, LoadedMapping
from loader.source.mapping_file import read_mapping

from .cases import TEST_SUFFIX, TestCase
from .compare import as_text
from .given import sheet_group
from .run import CaseBuild, build_case, column_letters, column_of, with_every_column

ROWS = 3
CASE_NAME = "three rows shaped like the sheet's first rows"


def synthetic(value: Any, row: int) -> Any:
    """A value of the same shape as `value` that is not it: letters and digits replaced, row by row."""
    if isinstance(value, datetime | date):
        return f"2000-01-{row + 1:02d}"
    if isinstance(value, bool):
        return "true" if row % 2 == 0 else "false"
    if isinstance(value, int | float) or isinstance(value, time):
        return str(100 + row)
    return "".join(_letter(c, i + row) for i, c in enumerate(str(value)))


def _letter(char: str, at: int) -> str:
    if "A" <= char <= "Z":
        return chr(ord("A") + at % 26)
    if "a" <= char <= "z":
        return chr(ord("a") + at % 26)
    if char.isdigit():
        return str(at % 10)
    return char


def _given_rows(block: DraftBlock, sample: Sample) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for row in range(ROWS):
        given: dict[str, Any] = {}
        for field in block.fields:
            values = sample.columns.get(field.column, ())
            if row >= len(values):
                continue
            mapped = field.spec.get("map")
            if isinstance(mapped, dict) and mapped and not field.spec.get("pii"):
                given[field.column] = str(list(mapped)[row % len(mapped)])
            elif field.spec.get("type") == "date":
                given[field.column] = f"2000-01-{row + 1:02d}"
            else:
                given[field.column] = synthetic(values[row], row)
        if given:
            rows.append(given)
    return rows


def draft_tests(mapping: Path, blocks: Sequence[tuple[DraftBlock, Sample]], profile: Profile) -> dict[Path, str]:
    """A test file's path and text for each drafted block (read from the written `mapping`)."""
    loaded = read_mapping(mapping, profile)
    if loaded.mapping is None:
        return {}
    folder = mapping.parent / "tests"
    written: dict[Path, str] = {}
    for draft, sample in blocks:
        block = next((b for b in loaded.mapping.blocks if b.name == draft.name), None)
        if block is None:
            continue
        group = sheet_group(loaded.mapping.blocks, block)
        given, built = _built(loaded, group, draft, sample, profile)
        name = mapping.stem if len(blocks) == 1 else f"{mapping.stem}-{draft.name}"
        expected = [_expected(r.fields) for r in built.records.get(block.name, ())]
        written[folder / f"{name}{TEST_SUFFIX}"] = _render(mapping, block.name, given, expected)
    return written


def _built(loaded: LoadedMapping, group: tuple[Block, ...], draft: DraftBlock, sample: Sample,
           profile: Profile) -> tuple[tuple[dict[str, Any], ...], CaseBuild]:
    """The synthetic rows and what they build. A column whose synthetic values the mapping refuses
    (a status its `map:` or the entity does not know) takes the sheet's own values instead, unless
    its field is personal: such values name a kind of thing, not a person."""
    given = tuple(_given_rows(draft, sample))
    place = MappingPlace(display_path(loaded.path), 1, 1)
    built = build_case(loaded, group, TestCase(CASE_NAME, place, given=with_every_column(given, group)), profile)
    letters = column_letters(with_every_column(given, group))
    refused = {column_of(f, letters) for f in built.errors} - {None}
    kept = {f.column for f in draft.fields if f.column in refused and not f.spec.get("pii")}
    if not kept:
        return given, built
    given = tuple({c: (str(sample.columns[c][row]) if c in kept else v) for c, v in values.items()}
                  for row, values in enumerate(given))
    return given, build_case(loaded, group, TestCase(CASE_NAME, place, given=with_every_column(given, group)), profile)


def _expected(fields: Any) -> dict[str, Any]:
    return {name: as_text(value) for name, value in fields.items()}


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return "null" if value is None else json.dumps(value, ensure_ascii=False)


def _render(mapping: Path, block: str, given: Sequence[dict[str, Any]],
            expected: Sequence[dict[str, Any]]) -> str:
    lines = [
        f"# A first test of {mapping.name}, written by `loader init` from synthetic values shaped like the",
        "# sheet's first rows (never a real person's). Make each case say what the mapping must do (a code",
        "# upper-cased, a row left out, an error at its cell), then remove `draft: true`. Run: `loader test`.",
        f"mapping: {json.dumps(f'../{mapping.name}')}",
        f"block: {json.dumps(block)}",
        "draft: true",
        "cases:",
        f"  - name: {json.dumps(CASE_NAME)}",
        "    given:",
        *(f"      - {_flow(row)}" for row in given),
        "    expect:" + ("" if expected else " []"),
        *(f"      - {_flow(record)}" for record in expected),
    ]
    return "\n".join(lines) + "\n"
