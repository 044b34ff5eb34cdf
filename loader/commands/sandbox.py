"""`loader sandbox serve`: run the local Institution Data Service (contract section 8).

It listens on http://127.0.0.1:8080 (base_url and auth_url; realm `sandbox`), reports environment
`sandbox`, and prints its address and credentials on start. Built-in clients (sandbox credentials,
not secrets): `sandbox-client` / `sandbox-secret` of institution A; `other-client` / `other-secret`
of institution B; `staff-client` / `staff-secret` of institution A, whose own service user stands
for a person editing records in the platform's interface (its writes carry that user in
`metadata.updated.user`). `--client ID:SECRET:INSTITUTION` adds one.
"""

from __future__ import annotations

import argparse
import sqlite3
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from loader.errors import UsageError
from loader.sandbox.faults import add_fault_arguments  # the declaration of the faults only: no web framework

if TYPE_CHECKING:  # the server (and its web framework) is imported only when serving
    from loader.sandbox.options import SandboxOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="sandbox_command", metavar="ACTION", required=True)
    serve = sub.add_parser(
        "serve",
        help="serve the sandbox until interrupted",
        description="serve the sandbox until interrupted. Built-in clients (not secrets): sandbox-client / "
        "sandbox-secret (institution A), other-client / other-secret (institution B), staff-client / "
        "staff-secret (institution A; stands for a person editing in the platform's interface)",
    )
    add_serve_arguments(serve)


def add_serve_arguments(serve: argparse.ArgumentParser) -> None:
    # also accepted after `serve`; SUPPRESS keeps a -v given before it
    serve.add_argument(
        "-v", "--verbose", action="count", default=argparse.SUPPRESS, help="log each request (method, path, status)"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8080, help="port (0: any free port, printed on start)")
    serve.add_argument("--data", default=":memory:", metavar="FILE", help="SQLite file, or :memory: (default)")
    serve.add_argument("--seed", metavar="FILE", help="seed JSON, applied only when the database is empty")
    serve.add_argument("--environment", default="sandbox", help="environment name the API reports")
    serve.add_argument(
        "--client", action="append", default=[], metavar="ID:SECRET:INSTITUTION", help="add a client (repeatable)"
    )
    serve.add_argument("--token-ttl", type=float, default=1800.0, help="access token lifetime, seconds")
    serve.add_argument("--page-token-ttl", type=float, default=60.0, help="page token lifetime, seconds")
    add_fault_arguments(serve)


def _options(args: argparse.Namespace) -> SandboxOptions:
    from loader.sandbox.faults import FaultOptions
    from loader.sandbox.options import SandboxOptions

    clients = []
    for spec in args.client:
        parts = spec.split(":")
        if len(parts) != 3 or not all(parts):
            raise UsageError(f"--client {spec!r}: expected ID:SECRET:INSTITUTION")
        clients.append((parts[0], parts[1], parts[2]))
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: use a number from 0 to 65535 (0: any free port)")
    if args.seed is not None:
        _check_seed(Path(args.seed))
    try:
        faults = FaultOptions.from_args(args)
        return SandboxOptions(
            data=args.data,
            seed=args.seed,
            environment=args.environment,
            token_ttl=args.token_ttl,
            page_token_ttl=args.page_token_ttl,
            faults=faults,
            clients=tuple(clients),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _check_seed(path: Path) -> None:
    """A seed must be a regular file (a FIFO or /dev/zero would hang the start)."""
    try:
        info = path.stat()
    except (OSError, ValueError) as error:
        raise UsageError(f"--seed {path}: cannot be read ({getattr(error, 'strerror', None) or error})") from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"--seed {path}: not a regular file", hint="give a seed JSON file")


NEEDS_CONFIG = False  # the sandbox is the service: it reads no loader.yaml


@dataclass(frozen=True)
class SandboxRequest:
    """`sandbox serve`, as plain values (options already checked)."""

    host: str
    port: int
    options: SandboxOptions
    access_log: bool


def request_from(args: argparse.Namespace) -> SandboxRequest:
    return SandboxRequest(args.host, args.port, _options(args), getattr(args, "verbose", 0) > 0)


def run(request: SandboxRequest) -> int:
    from loader.errors import LoaderError
    from loader.sandbox.seed import SeedError
    from loader.sandbox.server import LISTENING_PREFIX, bind_socket, open_app, serve_forever

    options = request.options
    try:
        app = open_app(options)
    except SeedError as exc:
        raise LoaderError(str(exc)) from exc
    except sqlite3.Error as exc:
        raise LoaderError(f"cannot open the sandbox database {options.data}: {exc}") from exc
    try:
        sock = bind_socket(request.host, request.port)
    except OSError as exc:
        raise LoaderError(f"cannot listen on {request.host}:{request.port}: {exc.strerror}") from exc
    host, port = sock.getsockname()[:2]
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{port}"
    print(f"{LISTENING_PREFIX}{url}")
    print(f"  base_url = auth_url = {url}   realm: sandbox   environment: {options.environment}")
    print("  sandbox credentials (not secrets):")
    for client in options.all_clients():
        print(f"    {client.client_id} / {client.secret}  ({client.institution})")
    print(f"  API browser: {url}/q/swagger-ui/   data: {options.data}   stop with Ctrl-C")
    sys.stdout.flush()
    serve_forever(app, sock, access_log=request.access_log)
    print("sandbox stopped")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (`python -m loader.sandbox serve ...`), independent of the other commands."""
    import logging

    from loader.errors import LoaderError, exit_code_for

    parser = argparse.ArgumentParser(prog="loader sandbox")
    parser.add_argument("-v", "--verbose", action="count", default=0)
    add_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING if not args.verbose else logging.INFO, format="%(message)s")
    try:
        return run(request_from(args))
    except LoaderError as error:
        print(f"loader: error: {error}", file=sys.stderr)
        return exit_code_for(error)
