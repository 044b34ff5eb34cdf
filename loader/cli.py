"""Command-line entry point: argument parsing and dispatch only.

Each subcommand lives in `loader.commands.<name>` and exposes `add_arguments(parser)`,
`request_from(args)` (the argparse namespace -> a frozen value of plain values, usage checked) and
`run(request, config) -> int`; a command that needs no configuration sets `NEEDS_CONFIG = False`
and takes `run(request)`. The configuration is loaded here, once, after the usage checks.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import os
import sys
import traceback
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from types import ModuleType
from typing import NoReturn, TextIO

from loader import __version__
from loader.console import colour_choice, shown
from loader.errors import EXIT_BUG, EXIT_INTERRUPTED, LoaderError, UsageError, exit_code_for, unwrap_error
from loader.files.private import private_folder
from loader.files.safe_write import replacing
from loader.redaction import configure_logging, redact

COMMANDS: dict[str, str] = {
    "validate": "offline: check mapping files and spreadsheets, build every record",
    "plan": "read inputs, fetch live data, show what would change",
    "apply": "apply creates and updates in dependency order",
    "pull": "export live records to a workbook",
    "revert": "make a plan that undoes one apply (default: the last), to review and apply with --plan",
    "show": "render a saved plan.json again (terminal, Markdown, HTML) without touching the service",
    "decide": "record a review workbook's skip and defer decisions in decisions.yaml",
    "init": "draft a mapping file from a workbook's headers",
    "test": "run the mapping tests offline: given rows in, expected records out",
    "history": "the applies recorded in the history, one record's loads; history baseline, reset, rekey",
    "whoami": "show the environment, API version and token lifetime",
    "sandbox": "run the local Institution Data Service",
    "completion": "print the shell completion script (bash, zsh or fish)",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message, hint=f"run `{self.prog} --help`")


ARGUMENT_BYTES = 4096  # PATH_MAX on Linux: no path, and no other value of an option, is longer


def check_argument_sizes(words: Sequence[str]) -> None:
    """Refuse, as a usage error naming the option, an argument longer than ARGUMENT_BYTES (in the
    bytes the system would see): a 100 KB `--out` or a 5,000-character path is no file name."""
    for at, word in enumerate(words):
        size = len(os.fsencode(word))
        if size <= ARGUMENT_BYTES:
            continue
        option = word.split("=", 1)[0] if word.startswith("--") and "=" in word[:64] else \
            words[at - 1] if at and words[at - 1].startswith("-") else "an argument"
        raise UsageError(f"{shown(option[:64])}: the value given is {size:,} bytes long, more than the "
                         f"{ARGUMENT_BYTES:,} a path or an option's value may have",
                         hint="give a shorter path or value")


def _command_module(name: str) -> ModuleType:
    return importlib.import_module(f"loader.commands.{name}")


def build_parser(only: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with `only`, the arguments of those commands alone (the others
    are listed, but their modules, and all they import, are not loaded)."""
    return _parsers(only)[0]


def command_parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser, by name, in the order of COMMANDS (docs/commands_page.py renders
    the commands page from their help)."""
    return _parsers(None)[1]


def _parsers(only: Collection[str] | None) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = _Parser(prog="loader", description="Declarative bulk loader for the Institution Data Service.")
    parser.add_argument("--version", action="version", version=f"loader {__version__}")
    common = _Parser(add_help=False)
    common.add_argument(
        "-v", "--verbose", action="count", default=0,
        help="log each request and retry: method, path, status, ms (never a token or secret)",
    )
    common.add_argument(
        "--no-color", action="store_true",
        help="no colour, even on a terminal or with FORCE_COLOR (as NO_COLOR)",
    )
    common.add_argument(
        "--config", metavar="FILE",
        help="project configuration (default: LOADER_CONFIG, else the nearest loader.yaml upward)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands: dict[str, argparse.ArgumentParser] = {}
    for name, summary in COMMANDS.items():
        command_parser = commands[name] = sub.add_parser(name, help=summary, description=summary, parents=[common])
        if only is None or name in only:
            module = _command_module(name)
            module.add_arguments(command_parser)
            command_parser.set_defaults(_module=module)
    return parser, commands


def _named_command(argv: Sequence[str]) -> set[str]:
    """The command `argv` names: its first word that is not an option (the top level takes no
    option with a value), when that is a command; else none (help, version, or a usage error)."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return {first} if first in COMMANDS else set()


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is at the time of each record (tests swap it)."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


class _RedactingFormatter(logging.Formatter):
    """Formats a record, traceback included, then hides every known secret and token in it."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def _start_logging(verbosity: int) -> logging.Handler:
    """Log the `loader.*` loggers to stderr for one command; undone by `_stop_logging`."""
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = _StderrHandler()
    # With -v, each line starts with its time (to the millisecond): a slow request or a wait shows.
    shape = "%(message)s" if verbosity == 0 else "%(asctime)s.%(msecs)03d %(message)s"
    handler.setFormatter(_RedactingFormatter(shape, datefmt="%H:%M:%S"))
    logger = logging.getLogger("loader")
    logger.setLevel(level)
    logger.addHandler(handler)
    return handler


def _stop_logging(handler: logging.Handler) -> None:
    logger = logging.getLogger("loader")
    logger.removeHandler(handler)
    logger.setLevel(logging.NOTSET)


@contextmanager
def tuned_interpreter() -> Iterator[None]:
    """The command line's one change to the interpreter, for one command: the cyclic garbage
    collector off inside, back as it was after.

    A command makes millions of objects that live until it ends (desired and live records, the
    plan, a plan.json's records) and few cycles; each of the collector's passes over the oldest
    generation walks every one of them again. Reference counting still frees everything not in a
    cycle, and an httpx answer's cycle with its stream is broken as it is read (`loader.api.client`);
    the command's process ends with it. A command that serves until stopped (`SERVING_COMMANDS`)
    keeps the collector. The library never calls this: a program using it keeps its own settings
    (tests/test_process_state.py). The gain is in docs/performance.md ("Interpreter settings and
    validation").
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


SERVING_COMMANDS = frozenset({"sandbox"})  # its process runs until stopped: the collector stays on

CRASH_LOG_NAME = "traceback.log"


def write_crash_log(error: BaseException) -> Path:
    """The traceback of `error`, secrets hidden, in a new private folder of the temp directory.

    The temp directory is shared: the folder is made by mkdtemp (a name nobody can guess, mode
    0700, refused if anything is there), and the file in it with O_EXCL | O_NOFOLLOW, mode 0600
    (exception texts can hold cell values, personal data), so a planted file or symlink is never
    followed or overwritten.
    """
    log_file = private_folder("loader-crash-") / CRASH_LOG_NAME
    with replacing(log_file) as handle:
        handle.write(redact("".join(traceback.format_exception(error))).encode("utf-8", "replace"))
    return log_file


def _report_bug(error: BaseException) -> int:
    try:
        where = f"The traceback is in {write_crash_log(error)}; please attach it to a bug report."
    except OSError as failure:
        where = f"The traceback could not be written ({failure.strerror or failure}); run again with -vv."
    print(
        f"loader: internal error ({type(error).__name__}). This is a bug in loader, not in your input.\n  {where}",
        file=sys.stderr,
    )
    return EXIT_BUG


def _dispatch(module: ModuleType, args: argparse.Namespace) -> int:
    """The command's request from `args`, then the configuration (loaded once, if the command needs
    one), then the command."""
    from loader.config import check_named, load_config

    check_named(getattr(args, "env", None), getattr(args, "config", None))
    request = module.request_from(args)
    if not getattr(module, "NEEDS_CONFIG", True):
        return int(module.run(request))
    config = load_config(Path(args.config) if getattr(args, "config", None) else None)
    return int(module.run(request, config))


def main(argv: Sequence[str] | None = None) -> int:
    args: argparse.Namespace | None = None
    try:
        words = sys.argv[1:] if argv is None else list(argv)
        check_argument_sizes(words)
        parser = build_parser(_named_command(words))
        args = parser.parse_args(words)
        if not getattr(args, "command", None):
            parser.print_help(sys.stderr)
            return exit_code_for(UsageError("no command given"))
        configure_logging()
        handler = _start_logging(args.verbose)
        try:
            with nullcontext() if args.command in SERVING_COMMANDS else tuned_interpreter(), \
                    colour_choice(no_color=args.no_color):
                return _dispatch(args._module, args)
        finally:
            _stop_logging(handler)
    except (SystemExit, GeneratorExit):
        raise
    except BaseException as raised:
        # Errors of concurrent tasks arrive wrapped in an ExceptionGroup: answer the first one
        # the user can act on, as if it had been raised alone.
        error = unwrap_error(raised)
        if isinstance(error, KeyboardInterrupt):
            print("loader: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        if isinstance(error, LoaderError):
            print(f"loader: error: {shown(redact(str(error)))}", file=sys.stderr)
            if args is not None:
                from loader.report.formats import print_error_output

                print_error_output(getattr(args, "format", "text"), args.command, error)
            return exit_code_for(error)
        return _report_bug(error)


if __name__ == "__main__":
    sys.exit(main())
