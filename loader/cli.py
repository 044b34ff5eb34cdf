"""Command-line entry point: argument parsing and dispatch only.

Each subcommand lives in `loader.commands.<name>` and exposes
`add_arguments(parser)` and `run(args) -> int`.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import tempfile
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import NoReturn, TextIO

from loader import __version__
from loader.errors import EXIT_BUG, EXIT_INTERRUPTED, LoaderError, UsageError, exit_code_for
from loader.private_files import write_private_text

COMMANDS: dict[str, str] = {
    "validate": "offline: check mapping files and spreadsheets, build every record",
    "plan": "read inputs, fetch live data, show what would change",
    "apply": "apply creates and updates in dependency order",
    "pull": "export live records to a workbook",
    "init": "draft a mapping file from a workbook's headers",
    "whoami": "show the environment, API version and token lifetime",
    "sandbox": "run the local Institution Data Service",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message, hint=f"run `{self.prog} --help`")


def _command_module(name: str) -> ModuleType:
    return importlib.import_module(f"loader.commands.{name}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="loader", description="Declarative bulk loader for the Institution Data Service.")
    parser.add_argument("--version", action="version", version=f"loader {__version__}")
    common = _Parser(add_help=False)
    common.add_argument(
        "-v", "--verbose", action="count", default=0,
        help="log each request and retry: method, path, status, ms (never a token or secret)",
    )
    common.add_argument("--config", metavar="FILE", help="project configuration (default: ./loader.yaml if present)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, summary in COMMANDS.items():
        module = _command_module(name)
        command_parser = sub.add_parser(name, help=summary, description=summary, parents=[common])
        module.add_arguments(command_parser)
        command_parser.set_defaults(_module=module)
    return parser


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is at the time of each record (tests swap it)."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


def _start_logging(verbosity: int) -> logging.Handler:
    """Log the `loader.*` loggers to stderr for one command; undone by `_stop_logging`."""
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("loader")
    logger.setLevel(level)
    logger.addHandler(handler)
    return handler


def _stop_logging(handler: logging.Handler) -> None:
    logger = logging.getLogger("loader")
    logger.removeHandler(handler)
    logger.setLevel(logging.NOTSET)


def _report_bug(error: BaseException) -> int:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    log_dir = Path(tempfile.gettempdir())
    log_file = log_dir / f"loader-crash-{stamp}.log"
    # 0600: exception texts can hold cell values (personal data) and the temp folder is shared.
    write_private_text(log_file, "".join(traceback.format_exception(error)))
    print(
        f"loader: internal error ({type(error).__name__}). This is a bug in loader, not in your input.\n"
        f"  The traceback is in {log_file}; please attach it to a bug report.",
        file=sys.stderr,
    )
    return EXIT_BUG


def _machine_error(args: argparse.Namespace | None, error: LoaderError) -> None:
    """With `--format json`, the error is also the one JSON document on stdout; with github, an annotation."""
    output = getattr(args, "format", "text")
    if args is None:
        return
    if output == "json":
        from loader.report.machine import dumps, error_document

        print(dumps(error_document(args.command, error.message, error.where, error.hint, exit_code_for(error))))
    elif output == "github":
        from loader.findings import Finding
        from loader.report.github import annotation

        print(annotation(Finding("error", type(error).__name__, error.message, error.where), "loader"))


def main(argv: Sequence[str] | None = None) -> int:
    args: argparse.Namespace | None = None
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help(sys.stderr)
            return exit_code_for(UsageError("no command given"))
        handler = _start_logging(args.verbose)
        try:
            return int(args._module.run(args))
        finally:
            _stop_logging(handler)
    except KeyboardInterrupt:
        print("loader: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except LoaderError as error:
        print(f"loader: error: {error}", file=sys.stderr)
        _machine_error(args, error)
        return exit_code_for(error)
    except Exception as error:
        return _report_bug(error)


if __name__ == "__main__":
    sys.exit(main())
