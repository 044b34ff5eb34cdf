"""`loader validate MAPPING...`: offline check of mapping files, sheets and every record
(`--select BLOCK`: of those blocks alone; the mapping files are checked whole)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from loader.commands.formats import add_format_argument
from loader.commands.selection import add_select_argument, selected
from loader.commands.validate_text import MappingLines, console_for, print_finding
from loader.config import Config
from loader.errors import EXIT_ERROR, EXIT_OK
from loader.plan.feed_fetching import fetch_feed
from loader.plan.mapping_tests.cases import tests_of
from loader.plan.mapping_tests.run import run_test_files
from loader.project import mappings_given_or_project
from loader.report import mapping_tests
from loader.report.finding_groups import source_findings
from loader.report.formats import print_validate_output
from loader.source.block_selection import selected_blocks
from loader.source.sources import SourceSet, load_mappings, read_sources
from loader.words import plural


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "mappings", nargs="*", metavar="MAPPING", type=Path,
        help="mapping files (YAML) (default: the project's, mappings/**/*.yaml)",
    )
    parser.add_argument("--read-sources", action="store_true",
                        help="also read the sources that need a network or credentials (read by plan)")
    add_select_argument(parser)
    add_format_argument(parser)


@dataclass(frozen=True)
class ValidateRequest:
    mappings: tuple[Path, ...]
    output: str = "text"  # --format
    read_sources: bool = False  # --read-sources: also those that need a network or credentials
    select: tuple[str, ...] = ()  # --select: the blocks checked (none: every block)


def request_from(args: argparse.Namespace) -> ValidateRequest:
    mappings = mappings_given_or_project(args.mappings, getattr(args, "config", None))
    return ValidateRequest(mappings, getattr(args, "format", "text"), args.read_sources, selected(args))


def run(request: ValidateRequest, config: Config) -> int:
    loaded = selected_blocks(load_mappings(list(request.mappings), config.profile), request.select).mappings
    sources = read_sources(loaded, config.profile, online=request.read_sources, fetch=fetch_feed)
    tests = run_test_files(_test_files(request.mappings, config), config.profile)
    code = EXIT_ERROR if sources.has_errors or not all(t.passed for t in tests) else EXIT_OK
    if request.output != "json":
        print_report(sources, sys.stdout)
        if tests:
            mapping_tests.print_results(tests, sys.stdout, passing=False)
    print_validate_output(request.output, sources, code,
                          mapping_tests.results_document(tests, code) if tests else None)
    if tests and request.output == "github":
        mapping_tests.print_annotations(tests, sys.stdout)
    return code


def _test_files(mappings: tuple[Path, ...], config: Config) -> list[Path]:
    """The tests of the mappings checked: in the project's mappings/tests/, or a tests/ folder beside
    a mapping."""
    folders = [config.root / "mappings" / "tests", *(m.parent / "tests" for m in mappings)]
    return tests_of(mappings, folders)


def print_report(sources: SourceSet, out: TextIO) -> None:
    """Every problem with its place (a mapping line quoted with a caret), one per cause, then one
    summary line per block and a total."""
    console = console_for(out)
    lines = MappingLines()
    shown = source_findings(sources)
    for finding in shown:
        print_finding(console, finding, lines)
    if sources.blocks:
        print("", file=out)
    for block in sources.blocks:
        errors = sum(1 for f in block.findings if f.severity == "error")
        warnings = len(block.findings) - errors
        where = f"{block.source_file} › {block.sheet}" if block.sheet else block.source_file
        filtered = f" ({block.rows_filtered} left out by where)" if block.rows_filtered else ""
        print(
            f"{block.mapping_file} {block.block} ({block.entity}) from {where}: "
            f"{plural(block.rows_read, 'row')} read{filtered}, {plural(len(block.records), 'record')} built, "
            f"{plural(errors, 'error')}, {plural(warnings, 'warning')}",
            file=out,
        )
    errors = sum(1 for f in sources.findings if f.severity == "error") + sum(
        1 for b in sources.blocks for f in b.findings if f.severity == "error"
    )
    warnings = len(sources.findings) + sum(len(b.findings) for b in sources.blocks) - errors
    verdict = "invalid" if errors else "valid"
    causes = sum(1 for finding in shown if finding.severity == "error")
    messages = f" ({plural(causes, 'message')})" if causes < errors else ""
    print(f"{verdict}: {plural(errors, 'error')}{messages}, {plural(warnings, 'warning')}", file=out)
