"""Mapping test files (`*.test.yaml`, contract section 12) as frozen values.

A given value is the text written in the file, as a CSV would give it (`0010` stays `0010`, `10`
stays the text "10"), unless it is typed (`{number: 10}`, `{date: 2027-02-01}`,
`{boolean: true}`). Expected values are kept as written too, and compared as text
(`loader.plan.mapping_tests.compare`), so YAML's guesses never change what a test says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from loader.errors import MappingError
from loader.files.fingerprints import display_path
from loader.files.inputs import read_regular_file
from loader.files.package_data import schema
from loader.places import MappingPlace
from loader.source.readers import CellValue
from loader.yaml_files import MarkedDocument, Path_, YamlSyntaxError, decode_yaml_text, load_marked, schema_problems

TEST_SUFFIX = ".test.yaml"


@dataclass(frozen=True)
class ExpectedError:
    """An error a case's rows must give: at a cell of `column` (None: anywhere), its message holding `contains`."""

    column: str | None
    contains: str


@dataclass(frozen=True)
class TestCase:
    """One case: rows in (`given`, or a JSON or XML document), records or errors out."""

    name: str
    place: MappingPlace
    given: tuple[dict[str, CellValue], ...] = ()
    given_json: Any = None
    given_xml: str | None = None
    expect: tuple[tuple[str | None, tuple[dict[str, Any], ...]], ...] | None = None  # (block, records)
    errors: tuple[ExpectedError, ...] = ()
    lookups: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()  # (name, (key, value) pairs)
    records: tuple[tuple[str, frozenset[str]], ...] | None = None  # (entity, keys) references may name


@dataclass(frozen=True)
class TestFile:
    """A test file: the mapping it tests (resolved), the block tested, whether it is a draft, its cases."""

    path: Path
    display: str
    mapping: Path
    block: str | None
    draft: bool
    cases: tuple[TestCase, ...]
    place: MappingPlace


@cache
def test_file_schema() -> dict[str, Any]:
    return schema("mapping-test.schema.json")


def read_test_file(path: Path) -> TestFile:
    """The test file at `path`. Raises MappingError naming the place of every problem in it."""
    display = (Path(display_path(path.parent)) / path.name).as_posix()  # a symlink by its own name
    try:
        doc = load_marked(decode_yaml_text(read_regular_file(path), display), display)
    except YamlSyntaxError as exc:
        raise MappingError(f"{exc.place}: {exc.message}", hint="fix the test file's YAML") from None
    except OSError as exc:
        reason = "file not found" if isinstance(exc, FileNotFoundError) else (exc.strerror or str(exc))
        raise MappingError(f"cannot read the test file {display}: {reason}") from None
    problems = [f"{place}: {message}" for place, message in doc.problems]
    problems += [f"{place}: {message}" for _, place, message in schema_problems(doc, test_file_schema())]
    if problems:
        raise MappingError("invalid test file:\n  " + "\n  ".join(problems),
                           hint="see the test file format in docs/testing.md")
    data = doc.data
    cases = tuple(_case(doc, i, entry) for i, entry in enumerate(data["cases"]))
    return TestFile(path, display, (path.parent / data["mapping"]).resolve(), data.get("block"),
                    bool(data.get("draft", False)), cases, doc.place(()))


def _case(doc: MarkedDocument, index: int, entry: dict[str, Any]) -> TestCase:
    at: Path_ = ("cases", index)
    given = tuple(_row(doc, (*at, "given", i), row) for i, row in enumerate(entry.get("given") or ()))
    expect = entry.get("expect")
    return TestCase(
        name=str(entry["name"]),
        place=doc.place(at),
        given=given,
        given_json=entry.get("given_json"),
        given_xml=entry.get("given_xml"),
        expect=None if expect is None else _expected(doc, (*at, "expect"), expect),
        errors=tuple(ExpectedError(e.get("column"), str(e["contains"])) for e in entry.get("errors") or ()),
        lookups=tuple((name, tuple((k, _text(doc, (*at, "lookups", name, k), v)) for k, v in table.items()))
                      for name, table in (entry.get("lookups") or {}).items()),
        records=None if entry.get("records") is None else tuple(
            (entity, frozenset(_text(doc, (*at, "records", entity, i), k) for i, k in enumerate(keys)))
            for entity, keys in entry["records"].items()),
    )


def _expected(doc: MarkedDocument, at: Path_, expect: Any) -> tuple[tuple[str | None, tuple[dict[str, Any], ...]], ...]:
    if isinstance(expect, list):
        return ((None, tuple(_written(doc, (*at, i), r) for i, r in enumerate(expect))),)
    return tuple((block, tuple(_written(doc, (*at, block, i), r) for i, r in enumerate(records)))
                 for block, records in expect.items())


def _written(doc: MarkedDocument, at: Path_, value: Any) -> Any:
    """`value` with every scalar as the text written (None stays None: an empty field)."""
    if isinstance(value, dict):
        return {k: _written(doc, (*at, k), v) for k, v in value.items()}
    if isinstance(value, list):
        return [_written(doc, (*at, i), v) for i, v in enumerate(value)]
    return None if value is None else _text(doc, at, value)


def _text(doc: MarkedDocument, at: Path_, value: Any) -> str:
    return doc.raw.get(at, str(value))


def _row(doc: MarkedDocument, at: Path_, row: dict[str, Any]) -> dict[str, CellValue]:
    return {column: _cell(doc, (*at, column), value) for column, value in row.items()}


def _cell(doc: MarkedDocument, at: Path_, value: Any) -> CellValue:
    """A given value as a source's cell: text as written, or the typed value asked for."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return _text(doc, at, value)
    (kind, typed), = value.items()
    text = _text(doc, (*at, kind), typed)
    try:
        if kind == "number":
            number = float(text)
            return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
        if kind == "date":
            return date.fromisoformat(text)
        if kind == "boolean":
            return text.strip().lower() in ("true", "yes", "1")
    except ValueError:
        raise MappingError(f"{doc.place((*at, kind))}: {text!r} is not a {kind}",
                           hint="write a number as 10 or 12.5, a date as 2027-02-01") from None
    return text


def tests_of(mappings: Sequence[Path], folders: Sequence[Path]) -> list[Path]:
    """The test files in `folders` (and their subfolders) that test one of `mappings`, in a stable
    order; a test file that cannot be read is left to `loader test` to report."""
    wanted = {m.resolve() for m in mappings}
    found: list[Path] = []
    for folder in dict.fromkeys(f.resolve() for f in folders if f.is_dir()):
        for path in sorted(folder.rglob(f"*{TEST_SUFFIX}")):
            try:
                if read_test_file(path).mapping in wanted:
                    found.append(path)
            except MappingError:
                continue
    return list(dict.fromkeys(found))
