"""`--select BLOCK` (repeatable), shared by validate, plan and apply: the blocks of the mapping
files to work on (`loader.source.block_selection` says how a block is named and what narrowing does)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def add_select_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--select", action="append", default=[], metavar="BLOCK",
        help="only this block of the mapping files (its name, or FILE:BLOCK); repeatable (default: every block)",
    )


def selected(args: argparse.Namespace) -> tuple[str, ...]:
    """The blocks `--select` names, each once, in the order given."""
    return tuple(dict.fromkeys(name.strip() for name in getattr(args, "select", None) or ()))


def select_words(select: Sequence[str]) -> list[str]:
    """The `--select` options of a command line that repeats the selection (the apply to run)."""
    return [word for name in select for word in ("--select", name)]
