"""Run mapping tests: each case's rows through the real source → records path, then compared.

A case reads its rows with every block over the tested block's sheet, as `read_sources` reads a
sheet for a plan (`repeat`, `where`, `collect`, rows merging within a block), then merges the
blocks' records as the planner does (`loader.plan.merge`), so a test sees what a plan would
propose. No service, no real source and no HTTP client: references are compared by the target's
key, and resolved only against the records a case lists in `records:`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from loader.errors import LoaderError
from loader.files.fingerprints import display_path
from loader.findings import Finding
from loader.places import CellRef, MappingPlace
from loader.plan.merge import merged_entries
from loader.profile import Profile
from loader.source.mapping import Block, LoadedMapping, Mapping
from loader.source.mapping_file import read_mapping
from loader.source.readers import column_letter
from loader.source.records import DesiredRecord, Ref
from loader.source.sources import read_sources

from .cases import ExpectedError, TestCase, read_test_file
from .compare import Failure, compare_records, key_text
from .given import given_blocks, sheet_group, tested_block


@dataclass(frozen=True)
class CaseResult:
    name: str
    place: MappingPlace
    failures: tuple[Failure, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass(frozen=True)
class FileResult:
    """A test file's cases run; `problem` when it could not run at all (its file or mapping is invalid)."""

    test: str  # the test file, as shown
    mapping: str
    draft: bool = False
    cases: tuple[CaseResult, ...] = ()
    problem: str | None = None

    @property
    def passed(self) -> bool:
        return self.problem is None and all(c.passed for c in self.cases)


def run_test_files(paths: Sequence[Path], profile: Profile) -> tuple[FileResult, ...]:
    return tuple(run_test_file(path, profile) for path in paths)


def run_test_file(path: Path, profile: Profile) -> FileResult:
    """Every case of the test file at `path`; a file that cannot run is one problem, never a traceback."""
    try:
        test = read_test_file(path)
    except LoaderError as exc:
        return FileResult(display_path(path), "", problem=str(exc))
    mapping = display_path(test.mapping)
    try:
        loaded = read_mapping(test.mapping, profile)
    except OSError as exc:
        reason = "file not found" if isinstance(exc, FileNotFoundError) else (exc.strerror or str(exc))
        return FileResult(test.display, mapping, test.draft, problem=f"{test.place}: cannot read {mapping}: {reason}")
    broken = [f for f in loaded.findings if f.severity == "error"]
    if broken or loaded.mapping is None:
        shown = "\n  ".join(f"{f.where}: {f.message}" for f in broken)
        return FileResult(test.display, mapping, test.draft, problem=f"the mapping {mapping} is invalid:\n  {shown}")
    try:
        block = tested_block(test, loaded.mapping.blocks)
        group = sheet_group(loaded.mapping.blocks, block)
        cases = tuple(_run_case(group, block, loaded, case, profile) for case in test.cases)
    except LoaderError as exc:
        return FileResult(test.display, mapping, test.draft, problem=str(exc))
    return FileResult(test.display, mapping, test.draft, cases)


@dataclass(frozen=True)
class CaseBuild:
    """What a case's rows built: each block's records (merged across blocks) and the errors."""

    records: dict[str, tuple[DesiredRecord, ...]]  # block name -> its records, as the plan sees them
    key_fields: dict[str, tuple[str, ...]]
    errors: tuple[Finding, ...]


def build_case(loaded: LoadedMapping, group: tuple[Block, ...], case: TestCase, profile: Profile) -> CaseBuild:
    """The case's rows read by every block of `group`, as `read_sources` reads a sheet, and merged
    across blocks as the planner merges them."""
    with tempfile.TemporaryDirectory(prefix="loader-test-") as folder:
        blocks = given_blocks(group, case, Path(folder))
        display = loaded.mapping.display if loaded.mapping else display_path(loaded.path)
        one = LoadedMapping(loaded.path, Mapping(loaded.path, display, blocks), (), loaded.fingerprint)
        sources = read_sources([one], profile, online=False)
    merged = merged_entries(sources.blocks)
    records = {(e.record.entity, key_text(e.record)): e.record for e in merged.entries}
    errors = [f for f in sources.findings if f.severity == "error"]
    errors += [f for b in sources.blocks for f in b.errors]
    errors += [f for found in merged.findings.values() for f in found if f.severity == "error"]
    return CaseBuild({b.block: tuple(records[(r.entity, key_text(r))] for r in b.records) for b in sources.blocks},
                     {b.block: b.key_fields for b in sources.blocks}, tuple(errors))


def _run_case(group: tuple[Block, ...], block: Block, loaded: LoadedMapping, case: TestCase,
              profile: Profile) -> CaseResult:
    case = replace(case, given=with_every_column(case.given, group))
    built = build_case(loaded, group, case, profile)
    failures = _error_failures(case.errors, built.errors, column_letters(case.given))
    every = {(r.entity, key_text(r)): r for found in built.records.values() for r in found}
    for name, expected in case.expect or ():
        records = built.records.get(name or block.name)
        if records is None:
            in_group = any(b.name == (name or block.name) for b in group)
            failures.append(Failure(f"block {name or block.name!r} could not read the given rows (see the errors)"
                                    if in_group else f"block {name!r} is not read with {block.name!r} (the blocks "
                                    f"over its sheet: {', '.join(b.name for b in group)})"))
            continue
        failures += compare_records(expected, records, built.key_fields[name or block.name], name or block.name)
        failures += _unresolved(case, records, every)
    return CaseResult(case.name, case.place, tuple(failures))


def with_every_column(given: tuple[dict[str, Any], ...], group: tuple[Block, ...]) -> tuple[dict[str, Any], ...]:
    """The rows with an empty cell for every column the blocks read that the case leaves out, as a
    CSV with those columns empty: a row after them, blank, gives the header those columns."""
    named = dict.fromkeys(c for b in group for v in b.variants for c in _columns(v.fields, v.where))
    missing = {c: None for c in named if all(c not in row for row in given)}
    return (*given, missing) if missing else given


def _columns(fields: Sequence[Any], where: Sequence[Any]) -> list[str]:
    found = [c for spec in fields for c in (*spec.columns, *(w.column for w in spec.when))]
    return found + [w.column for w in where]


def column_letters(given: tuple[dict[str, Any], ...]) -> dict[str, str]:
    """Column letter -> the given column it stands for, in the order the table reads them."""
    order = list(dict.fromkeys(column for row in given for column in row))
    return {column_letter(i): name for i, name in enumerate(order)}


def column_of(finding: Finding, letters: dict[str, str]) -> str | None:
    where = finding.where
    if isinstance(where, CellRef) and where.cell:
        if where.record is not None:  # a case's rows are a table: its places name the column itself
            return where.cell
        return letters.get(where.cell.rstrip("0123456789"))
    return None


def _error_failures(expected: Sequence[ExpectedError], errors: Sequence[Finding],
                    letters: dict[str, str]) -> list[Failure]:
    """Each expected error found among `errors`, and no other error."""
    failures: list[Failure] = []
    matched: set[int] = set()
    for wanted in expected:
        hit = next((i for i, f in enumerate(errors) if _matches(wanted, f, letters)), None)
        if hit is None:
            at = f" at column {wanted.column!r}" if wanted.column else ""
            failures.append(Failure(f"expected an error{at} containing {wanted.contains!r}; errors given: "
                                    + ("; ".join(f"{f.where}: {f.message}" for f in errors) or "none")))
        else:
            matched.add(hit)
    failures += [Failure(f"unexpected error: {f.where}: {f.message}") for i, f in enumerate(errors) if i not in matched]
    return failures


def _matches(wanted: ExpectedError, finding: Finding, letters: dict[str, str]) -> bool:
    if wanted.contains.casefold() not in finding.message.casefold():
        return False
    if wanted.column is None:
        return True
    return column_of(finding, letters) == wanted.column or wanted.column in str(finding.where or "")


def _unresolved(case: TestCase, built: Sequence[DesiredRecord],
                records: dict[tuple[str, str], DesiredRecord]) -> list[Failure]:
    """References to records neither the case's `records:` list nor the case builds (only with `records:`)."""
    if case.records is None:
        return []
    known = dict(case.records)
    failures = []
    for record in built:
        for name, value in record.fields.items():
            for ref in (value if isinstance(value, list | tuple) else (value,)):
                if not isinstance(ref, Ref):
                    continue
                target = "/".join(str(v) for v in ref.values)
                if target not in known.get(ref.entity, frozenset()) and (ref.entity, target) not in records:
                    failures.append(Failure(f"{name} names {ref.entity} {target}, which is not among the case's "
                                            "records", key_text(record)))
    return failures
