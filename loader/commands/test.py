"""`loader test [PATH...]`: run the mapping tests offline (contract section 12).

A PATH is a `*.test.yaml` file or a folder holding them; none given: every `*.test.yaml` under
the project's `mappings/tests/`. No service, no source, no HTTP client, database driver or
DataFrame library is touched (tests/commands/test_test_command.py holds it to that).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from loader.commands.formats import add_format_argument
from loader.config import Config
from loader.errors import EXIT_ERROR, EXIT_OK, UsageError
from loader.plan.mapping_tests.cases import TEST_SUFFIX
from loader.plan.mapping_tests.run import FileResult, run_test_files
from loader.report import mapping_tests

TESTS_FOLDER = Path("mappings") / "tests"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", type=Path,
                        help=f"test files ({TEST_SUFFIX}) or folders of them (default: {TESTS_FOLDER}/)")
    add_format_argument(parser)


@dataclass(frozen=True)
class TestRequest:
    paths: tuple[Path, ...]
    output: str = "text"


def request_from(args: argparse.Namespace) -> TestRequest:
    return TestRequest(tuple(args.paths), getattr(args, "format", "text"))


def test_files(paths: Sequence[Path], root: Path) -> list[Path]:
    """The test files `paths` name (a folder: every test file under it), in a stable order; none
    given: those under `root`'s mappings/tests/."""
    if not paths:
        folder = root / TESTS_FOLDER
        if not folder.is_dir():
            raise UsageError(f"no test files given and no {TESTS_FOLDER}/ folder in {root}",
                             hint=f"name test files ({TEST_SUFFIX}), or write them in {TESTS_FOLDER}/")
        paths = [folder]
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(path.rglob(f"*{TEST_SUFFIX}"))
        else:
            found.append(path)
    return list(dict.fromkeys(found))


def exit_code(results: Sequence[FileResult]) -> int:
    return EXIT_OK if all(r.passed for r in results) else EXIT_ERROR


def run(request: TestRequest, config: Config) -> int:
    results = run_test_files(test_files(request.paths, config.root), config.profile)
    code = exit_code(results)
    if request.output == "json":
        print(json.dumps(mapping_tests.results_document(results, code), indent=2, ensure_ascii=False))
        return code
    mapping_tests.print_results(results, sys.stdout)
    if request.output == "github":
        mapping_tests.print_annotations(results, sys.stdout)
    return code
