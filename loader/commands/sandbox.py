"""`loader sandbox serve`: run the local Institution Data Service (contract section 8)."""

from __future__ import annotations

import argparse
import signal
import sqlite3
import stat
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from loader.errors import UsageError

if TYPE_CHECKING:  # the server (and its web framework) is imported only when serving
    from loader.sandbox.options import SandboxOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="sandbox_command", metavar="ACTION", required=True)
    serve = sub.add_parser("serve", help="serve the sandbox until interrupted", description="serve the sandbox")
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
    serve.add_argument("--latency-ms", type=float, default=0, help="added latency per request")
    serve.add_argument("--jitter-ms", type=float, default=0, help="uniform random extra latency, up to this")
    serve.add_argument("--error-rate", type=float, default=0.0, help="share of requests answered 500/503 untouched")
    serve.add_argument("--lost-rate", type=float, default=0.0, help="share of writes committed, then answered 500")
    serve.add_argument("--rate-limit", type=float, default=None, help="requests per second before 429")
    serve.add_argument("--token-ttl", type=float, default=1800.0, help="access token lifetime, seconds")
    serve.add_argument("--page-token-ttl", type=float, default=60.0, help="page token lifetime, seconds")
    serve.add_argument("--fault-seed", type=int, default=0, help="seed of the fault draws")


def _options(args: argparse.Namespace) -> SandboxOptions:
    from loader.sandbox.faults import FaultOptions
    from loader.sandbox.options import SandboxOptions

    clients = []
    for spec in args.client:
        parts = spec.split(":")
        if len(parts) != 3 or not all(parts):
            raise UsageError(f"--client {spec!r}: expected ID:SECRET:INSTITUTION")
        clients.append((parts[0], parts[1], parts[2]))
    try:
        faults = FaultOptions(
            latency_ms=args.latency_ms,
            jitter_ms=args.jitter_ms,
            error_rate=args.error_rate,
            lost_rate=args.lost_rate,
            rate_limit=args.rate_limit,
            seed=args.fault_seed,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: use a number from 0 to 65535 (0: any free port)")
    if args.seed is not None:
        _check_seed(Path(args.seed))
    if args.token_ttl <= 0 or args.page_token_ttl <= 0:
        raise UsageError("--token-ttl and --page-token-ttl must be > 0")
    return SandboxOptions(
        data=args.data,
        seed=args.seed,
        environment=args.environment,
        token_ttl=args.token_ttl,
        page_token_ttl=args.page_token_ttl,
        faults=faults,
        clients=tuple(clients),
    )


def _check_seed(path: Path) -> None:
    """A seed must be a regular file (a FIFO or /dev/zero would hang the start)."""
    try:
        info = path.stat()
    except (OSError, ValueError) as error:
        raise UsageError(f"--seed {path}: cannot be read ({getattr(error, 'strerror', None) or error})") from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"--seed {path}: not a regular file", hint="give a seed JSON file")


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from loader.errors import LoaderError
    from loader.sandbox.seed import SeedError
    from loader.sandbox.server import LISTENING_PREFIX, bind_socket, open_app, uvicorn_config

    options = _options(args)
    try:
        app = open_app(options)
    except SeedError as exc:
        raise LoaderError(str(exc)) from exc
    except sqlite3.Error as exc:
        raise LoaderError(f"cannot open the sandbox database {options.data}: {exc}") from exc
    try:
        sock = bind_socket(args.host, args.port)
    except OSError as exc:
        raise LoaderError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from exc
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
    server = uvicorn.Server(uvicorn_config(app, access_log=getattr(args, "verbose", 0) > 0))
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal to the previous
    # handler: make that a no-op for SIGTERM and swallow the KeyboardInterrupt of SIGINT, so both exit 0.
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, lambda *_: None) if in_main else None
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
        app.state.sandbox.store.close()
        sock.close()
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
        return run(args)
    except LoaderError as error:
        print(f"loader: error: {error}", file=sys.stderr)
        return exit_code_for(error)
