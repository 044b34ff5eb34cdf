"""`loader validate MAPPING...`: offline check of mapping files, sheets and every record."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from loader.commands.formats import add_format_argument
from loader.config import Config
from loader.errors import EXIT_ERROR, EXIT_OK
from loader.findings import Finding
from loader.report.github import print_annotations, validate_summary, write_summary
from loader.report.machine import dumps, validate_document
from loader.source.sources import SourceSet, read_sources


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("mappings", nargs="+", metavar="MAPPING", type=Path, help="mapping files (YAML)")
    add_format_argument(parser)


@dataclass(frozen=True)
class ValidateRequest:
    mappings: tuple[Path, ...]
    output: str = "text"  # --format


def request_from(args: argparse.Namespace) -> ValidateRequest:
    return ValidateRequest(tuple(args.mappings), getattr(args, "format", "text"))


def run(request: ValidateRequest, config: Config) -> int:
    sources = read_sources(list(request.mappings), config.profile)
    code = EXIT_ERROR if sources.has_errors else EXIT_OK
    output = request.output
    if output == "json":
        print(dumps(validate_document(sources, code)))
        return code
    print_report(sources, sys.stdout)
    if output == "github":
        document = validate_document(sources, code)
        print_annotations(_all_findings(sources))
        write_summary(validate_summary(document))
    return code


def _all_findings(sources: SourceSet) -> list[tuple[str, Finding]]:
    return [("", f) for f in sources.findings] + [(b.block, f) for b in sources.blocks for f in b.findings]


def _line(finding: Finding) -> str:
    return f"{finding.severity}: {finding.where}: {finding.message}" if finding.where else \
        f"{finding.severity}: {finding.message}"


def print_report(sources: SourceSet, out: TextIO) -> None:
    """Every problem with its place, then one summary line per block and a total."""
    for finding in sources.findings:
        print(_line(finding), file=out)
    for block in sources.blocks:
        for finding in block.findings:
            print(_line(finding), file=out)
    if sources.blocks:
        print("", file=out)
    for block in sources.blocks:
        errors = sum(1 for f in block.findings if f.severity == "error")
        warnings = len(block.findings) - errors
        where = f"{block.source_file} › {block.sheet}" if block.sheet else block.source_file
        filtered = f" ({block.rows_filtered} left out by where)" if block.rows_filtered else ""
        print(
            f"{block.mapping_file} {block.block} ({block.entity}) from {where}: "
            f"{block.rows_read} rows read{filtered}, {len(block.records)} records built, "
            f"{errors} errors, {warnings} warnings",
            file=out,
        )
    errors = sum(1 for f in sources.findings if f.severity == "error") + sum(
        1 for b in sources.blocks for f in b.findings if f.severity == "error"
    )
    warnings = len(sources.findings) + sum(len(b.findings) for b in sources.blocks) - errors
    verdict = "invalid" if errors else "valid"
    print(f"{verdict}: {errors} errors, {warnings} warnings", file=out)
