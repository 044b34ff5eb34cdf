"""`loader history`: what the loader wrote to an environment, and keeping that history.

    loader history [--env NAME] [--format json]                       the applies, newest first
    loader history [--env NAME] --entity E --key FIELD=VALUE...      one record's loads, field by field
    loader history baseline MAPPING... [--env NAME] [--yes]          record live as last loaded
    loader history reset [--env NAME] [--yes]                        forget the history
    loader history rekey [--env NAME] --new-key-env NAME             move it to a new key

Exit codes as the other commands: 0 done, 1 an error (a missing or wrong key, an answer not yes),
64 a usage error. The history key is never printed.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from loader.errors import EXIT_OK, UsageError

if TYPE_CHECKING:
    from loader.config import Config

ACTIONS = ("baseline", "reset", "rekey")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", metavar="ACTION",
                        help="baseline MAPPING... | reset | rekey (none: list the applies, or one record's loads)")
    parser.add_argument("mappings", nargs="*", metavar="MAPPING", help="mapping files (baseline)")
    parser.add_argument("--env", metavar="NAME", help="environment of loader.yaml (default: its default, else sandbox)")
    parser.add_argument("--entity", metavar="ENTITY", help="show one record's loads: its entity")
    parser.add_argument("--key", nargs="+", metavar="FIELD=VALUE", help="show one record's loads: its key")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text (default); json: one JSON document on stdout")
    parser.add_argument("--yes", action="store_true", help="baseline, reset: do not ask for confirmation")
    parser.add_argument("--by", metavar="NAME", help="baseline: who records it (default: CI actor, else git user)")
    parser.add_argument("--new-key-env", metavar="NAME", help="rekey: the variable holding the new history key")


@dataclass(frozen=True)
class HistoryRequest:
    """What `loader history` was asked, as plain values (usage already checked)."""

    action: str | None  # None: list the applies (or one record's loads)
    env: str | None
    mappings: tuple[Path, ...] = ()
    entity: str | None = None
    key: tuple[tuple[str, str], ...] = ()
    output: str = "text"
    yes: bool = False
    by: str | None = None
    new_key_env: str | None = None


def request_from(args: argparse.Namespace) -> HistoryRequest:
    action, mappings = args.action, tuple(Path(m) for m in args.mappings)
    if action is not None and action not in ACTIONS:
        raise UsageError(f"unknown history action {action!r}", hint=f"use one of: {', '.join(ACTIONS)}, or none")
    _check_options(args, action, mappings)
    return HistoryRequest(action=action, env=args.env, mappings=mappings, entity=args.entity,
                          key=tuple(_key_part(part) for part in args.key or ()), output=args.format,
                          yes=args.yes, by=args.by, new_key_env=args.new_key_env)


def _check_options(args: argparse.Namespace, action: str | None, mappings: tuple[Path, ...]) -> None:
    given = {"--entity": args.entity is not None, "--key": bool(args.key), "--yes": args.yes,
             "--by": args.by is not None, "--new-key-env": args.new_key_env is not None,
             "--format json": args.format != "text", "MAPPING": bool(mappings)}
    allowed = {None: {"--entity", "--key", "--format json"}, "baseline": {"--yes", "--by", "MAPPING"},
               "reset": {"--yes"}, "rekey": {"--new-key-env"}}[action]
    for option in (name for name, present in given.items() if present and name not in allowed):
        what = f"`loader history {action}`" if action else "`loader history`"
        raise UsageError(f"{option} does not go with {what}", hint="run `loader history --help`")
    if action is None and (args.entity is None) != (not args.key):
        raise UsageError("--entity and --key go together", hint="e.g. --entity courses --key code=BSC-01")
    if action == "baseline" and not mappings:
        raise UsageError("`loader history baseline` needs the mapping files whose records to record")
    if action == "rekey" and (args.new_key_env is None or not _VARIABLE.fullmatch(args.new_key_env)):
        raise UsageError("`loader history rekey` needs --new-key-env NAME, the variable holding the new key",
                         hint="e.g. --new-key-env LOADER_HISTORY_KEY_NEW (the key itself is never an argument)")


def _key_part(text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        raise UsageError(f"--key {text!r} is not FIELD=VALUE", hint="e.g. --key code=BSC-01")
    return name.strip(), value


def run(request: HistoryRequest, config: Config) -> int:
    from loader.commands import history_actions as actions

    if request.action == "baseline":
        return actions.baseline(request, config)
    if request.action == "reset":
        return actions.reset(request, config)
    if request.action == "rekey":
        return actions.rekey(request, config)
    if request.entity is not None:
        return actions.show_record(request, config)
    actions.show_applies(request, config)
    return EXIT_OK
