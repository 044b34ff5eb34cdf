"""Entry points: run a sandbox on a free loopback port, in a thread or in a child process.

    with serve_in_thread(SandboxOptions(seed=...)) as sb:
        sb.base_url, sb.client_id, sb.client_secret, sb.stats(), sb.set_faults(FaultOptions(...))

Both return a `RunningSandbox`, which talks to the server only over HTTP (stats, faults), so the
thread-served and process-served sandboxes behave alike.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette

from loader.sandbox.app import build_app
from loader.sandbox.entities import ENTITIES
from loader.sandbox.faults import FaultOptions
from loader.sandbox.options import REALM, SandboxOptions
from loader.sandbox.seed import apply_seed, read_seed
from loader.sandbox.service import Service, service_users
from loader.sandbox.store import Store

__all__ = ["FaultOptions", "RunningSandbox", "SandboxOptions", "open_app", "serve_in_subprocess", "serve_in_thread"]

STARTUP_TIMEOUT_S = 180.0  # seeding 100,000s of records on a loaded 2-core machine took over 60 s
LISTENING_PREFIX = "sandbox listening on "


@dataclass(frozen=True)
class RunningSandbox:
    """Where a running sandbox answers, and with which credentials."""

    base_url: str
    realm: str = REALM
    client_id: str = "sandbox-client"
    client_secret: str = "sandbox-secret"
    other_client_id: str = "other-client"
    other_client_secret: str = "other-secret"
    staff_client_id: str = "staff-client"  # institution A, standing for a person editing in the platform
    staff_client_secret: str = "staff-secret"

    @property
    def auth_url(self) -> str:
        return self.base_url

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1])

    def _call(
        self, method: str, path: str, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None
    ) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base_url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json", **(headers or {})},
        )
        # Loopback only: never through a proxy named by HTTP_PROXY.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=30) as answer:
            return json.loads(answer.read())

    def stats(self) -> dict[str, Any]:
        return self._call("GET", "/q/sandbox/stats")  # type: ignore[no-any-return]

    def reset_stats(self) -> None:
        self._call("POST", "/q/sandbox/stats/reset", {})

    def set_faults(self, faults: FaultOptions) -> None:
        self._call("POST", "/q/sandbox/faults", faults.to_dict())

    def _token(self, client_id: str, secret: str) -> str:
        form = urllib.parse.urlencode(
            {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}
        ).encode()
        request = urllib.request.Request(
            f"{self.base_url}/realms/{self.realm}/protocol/openid-connect/token", data=form, method="POST"
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=30) as answer:
            return str(json.loads(answer.read())["access_token"])

    def outbox(self, other: bool = False) -> list[dict[str, Any]]:
        """The e-mails sent for institution A (B with `other`), as that institution's client sees them."""
        client_id, secret = (
            (self.other_client_id, self.other_client_secret) if other else (self.client_id, self.client_secret)
        )
        headers = {"Authorization": f"Bearer {self._token(client_id, secret)}"}
        return self._call("GET", "/q/sandbox/outbox", headers=headers)["messages"]  # type: ignore[no-any-return]


def open_app(options: SandboxOptions) -> Starlette:
    """Open the store (seeding a new one) and build the app; call it in the thread that will serve it."""
    store = Store(str(options.data))
    service = Service(store, ENTITIES, service_users(options.all_clients()))
    try:
        apply_seed(store, service, read_seed(options.seed), [c.institution for c in options.all_clients()])
    except BaseException:
        store.close()
        raise
    return build_app(options, store, service)


def uvicorn_config(app: Starlette, access_log: bool = False) -> uvicorn.Config:
    """uvicorn settings of every sandbox; the access log (method, path, status) only when asked."""
    return uvicorn.Config(
        app,
        log_level="info" if access_log else "warning",
        access_log=access_log,
        lifespan="off",
        timeout_graceful_shutdown=2,
    )


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    return sock


def serve_forever(app: Starlette, sock: socket.socket, *, access_log: bool = False) -> None:
    """Serve on `sock` until SIGINT or SIGTERM, then close the store and the socket (`loader sandbox serve`)."""
    server = uvicorn.Server(uvicorn_config(app, access_log=access_log))
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


@contextmanager
def serve_in_thread(options: SandboxOptions | None = None) -> Iterator[RunningSandbox]:
    """uvicorn in a background thread on a free 127.0.0.1 port; stops when the block ends."""
    options = options or SandboxOptions()
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    ready = threading.Event()
    holder: dict[str, Any] = {}

    def run() -> None:
        try:
            app = open_app(options)
            server = uvicorn.Server(uvicorn_config(app))
            holder["server"] = server
            ready.set()
            server.run(sockets=[sock])
        except BaseException as exc:
            holder["error"] = exc
            ready.set()
        finally:
            app_state = holder.get("server")
            if app_state is not None:
                app_state.config.app.state.sandbox.store.close()

    thread = threading.Thread(target=run, name=f"sandbox-{port}", daemon=True)
    thread.start()
    try:
        if not ready.wait(STARTUP_TIMEOUT_S) or "error" in holder:
            raise RuntimeError(f"sandbox did not start: {holder.get('error')!r}") from holder.get("error")
        server: uvicorn.Server = holder["server"]
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError(f"sandbox did not start: {holder.get('error')!r}")
            thread.join(0.01)
        yield _running(options, f"http://127.0.0.1:{port}")
    finally:
        if "server" in holder:
            holder["server"].should_exit = True
        thread.join(15)
        sock.close()


def _running(options: SandboxOptions, base_url: str) -> RunningSandbox:
    return RunningSandbox(base_url=base_url)


def serve_args(options: SandboxOptions, seed_file: str | None) -> list[str]:
    """Command-line options of `loader sandbox serve` that reproduce `options`."""
    args = [
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--data",
        str(options.data),
        "--environment",
        options.environment,
        "--token-ttl",
        repr(options.token_ttl),
        "--page-token-ttl",
        repr(options.page_token_ttl),
        *options.faults.serve_args(),
    ]
    if seed_file is not None:
        args += ["--seed", seed_file]
    for client_id, secret, institution in options.clients:
        args += ["--client", f"{client_id}:{secret}:{institution}"]
    return args


@contextmanager
def serve_in_subprocess(options: SandboxOptions | None = None) -> Iterator[RunningSandbox]:
    """`python -m loader.sandbox serve --port 0 ...` in a child process; SIGTERM when the block ends."""
    options = options or SandboxOptions()
    with tempfile.TemporaryDirectory(prefix="sandbox-seed-") as tmp:
        seed_file: str | None = None
        if isinstance(options.seed, dict):
            seed_file = str(Path(tmp) / "seed.json")
            Path(seed_file).write_text(json.dumps(options.seed), encoding="utf-8")
        elif options.seed is not None:
            seed_file = str(options.seed)
        command = [sys.executable, "-m", "loader.sandbox", "serve", *serve_args(options, seed_file)]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            base_url = _read_address(child)
            _drain(child)
            yield _running(options, base_url)
        finally:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
                try:
                    child.wait(15)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()
            for stream in (child.stdout, child.stderr):
                if stream is not None:
                    stream.close()


def _drain(child: subprocess.Popen[str]) -> None:
    """Keep reading the child's output so a chatty server never blocks on a full pipe."""
    for stream in (child.stdout, child.stderr):
        if stream is not None:
            threading.Thread(target=stream.read, daemon=True).start()


def _read_address(child: subprocess.Popen[str]) -> str:
    assert child.stdout is not None
    timer = threading.Timer(STARTUP_TIMEOUT_S, child.kill)
    timer.start()
    try:
        for line in child.stdout:
            if line.startswith(LISTENING_PREFIX):
                return line[len(LISTENING_PREFIX) :].strip()
    finally:
        timer.cancel()
    stderr = child.stderr.read() if child.stderr is not None else ""
    raise RuntimeError(f"sandbox process exited before listening: {stderr.strip()[-2000:]}")
