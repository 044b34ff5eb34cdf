"""The results files of an apply (`--results FILE`, repeatable): results.json or results.xlsx by
the file's ending, each said on stderr as it is written. A file that cannot be written is said and
the others are still written: results are never lost for one bad path."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from loader.apply.results import Results
from loader.errors import UsageError
from loader.files.outputs import check_output
from loader.plan.model import Plan
from loader.report.results_json import write_results_json
from loader.report.results_workbook import FieldCells, write_results_workbook
from loader.source.sources import SourceSet

RESULT_SUFFIXES = (".xlsx", ".json")


def check_results_path(path: Path) -> None:
    """Before the first write (results written at the end must not be lost): a .xlsx or .json
    file that can be written."""
    if path.suffix.lower() not in RESULT_SUFFIXES:
        raise UsageError(f"--results {path}: use a .xlsx or .json file name")
    check_output(path, "--results")


def write_results_files(
    results: Results, paths: Iterable[Path], *, plan: Plan, sources: SourceSet | None = None
) -> bool:
    """Write each of `paths`; False when any could not be written. `plan` is the plan applied;
    `sources`, when apply read them itself, say which cell each field came from (results.xlsx marks
    a failure's cells)."""
    written = True
    for path in paths:
        try:
            _write(results, path, plan, sources)
        except OSError as error:
            print(f"loader: error: cannot write {path}: {error.strerror or error}", file=sys.stderr)
            written = False
    return written


def _write(results: Results, path: Path, plan: Plan, sources: SourceSet | None) -> None:
    if path.suffix.lower() == ".json":
        write_results_json(results, path)
    else:
        notes = write_results_workbook(
            results,
            path,
            plan=plan,
            field_cells=_field_cells(sources) if sources is not None else {},
            row_errors={b.name: b.findings for b in plan.blocks},
            confine_to=Path.cwd() if sources is None else None,  # a saved plan names its files: the project's only
        )
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    print(f"wrote {path}", file=sys.stderr)


def _field_cells(sources: SourceSet) -> FieldCells:
    return {
        (b.block, rec.row.row): dict(rec.cells)
        for b in sources.blocks
        for rec in b.records
        if rec.row.row is not None
    }
