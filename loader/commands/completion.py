"""`loader completion bash|zsh|fish`: the shell's completion script for every command and option,
generated from the command line's own parser (shtab), so it never falls behind it.

    loader completion bash > ~/.local/share/bash-completion/completions/loader
    loader completion zsh > "${fpath[1]}/_loader"
    loader completion fish > ~/.config/fish/completions/loader.fish

Nothing runs at completion time but the shell: the script is static.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from loader.errors import EXIT_OK

NEEDS_CONFIG = False  # the parser alone
SHELLS = ("bash", "zsh", "fish")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")


@dataclass(frozen=True)
class CompletionRequest:
    shell: str


def request_from(args: argparse.Namespace) -> CompletionRequest:
    return CompletionRequest(args.shell)


def run(request: CompletionRequest) -> int:
    import shtab  # only this command needs it

    from loader.cli import build_parser  # the whole parser: every command and its options

    sys.stdout.write(shtab.complete(build_parser(), shell=request.shell))
    return EXIT_OK
