"""Sandbox headroom: the server's CPU per write, so writes/s on one core, measured two ways.

    python tests/benchmarks/bench_sandbox_writes.py [--writes 2000] [--concurrency 8] [--data :memory:]

1. Over HTTP: the sandbox in a child process (uvicorn, as the benchmarks and tests run it) takes
   creates then updates (schools) from `--concurrency` workers of an httpx client sending through the
   loader's transport; the child's own CPU time (user + system, read with psutil) per write gives
   the writes/s one core sustains: what the benchmarks see of the sandbox, the HTTP server included.
2. In-process: the same writes called on the ASGI app directly (no sockets, no uvicorn), the process
   CPU time per write: the app's, service's and store's own cost.

The target (issue 12): >= 2,000 writes/s on one core, so a benchmark writing at 400 writes/s leaves
the sandbox idle most of the time. CPU time, not wall time, so the figure survives a shared machine;
the load average is printed beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from typing import Any

import httpx
import psutil

from loader.api.transport import AiohttpTransport
from loader.sandbox.server import SandboxOptions, open_app, serve_in_subprocess

SCHOOLS = "/institution/catalogue/schools"
TOKEN_PATH = "/realms/sandbox/protocol/openid-connect/token"


def _load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def _server_process() -> psutil.Process:
    children = psutil.Process().children()
    if len(children) != 1:
        raise SystemExit(f"expected one sandbox child process, found {len(children)}")
    return children[0]


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


async def _over_http(base_url: str, writes: int, concurrency: int) -> tuple[float, float, float]:
    """(creates/s, updates/s on one core, wall s) from the child's CPU time per write."""
    server = _server_process()
    limits = httpx.Limits(max_connections=concurrency + 2, max_keepalive_connections=concurrency + 2)
    transport = AiohttpTransport(trust_env=False, limits=limits)
    async with httpx.AsyncClient(base_url=base_url, transport=transport, timeout=30) as http:
        form = {"grant_type": "client_credentials", "client_id": "sandbox-client", "client_secret": "sandbox-secret"}
        token = (await http.post(TOKEN_PATH, data=form)).json()["access_token"]
        http.headers["Authorization"] = f"Bearer {token}"

        async def run(work: list[tuple[str, str, dict[str, Any]]], expect: int) -> tuple[float, list[str]]:
            items = iter(work)
            ids: list[str] = []

            async def worker() -> None:
                for method, path, body in items:
                    answer = await http.request(method, path, json=body)
                    if answer.status_code != expect:
                        raise SystemExit(f"unexpected {answer.status_code}: {answer.text[:200]}")
                    ids.append(answer.json()["data"]["id"])

            before = _cpu(server)
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            return _cpu(server) - before, ids

        started = time.perf_counter()
        create_cpu, ids = await run([("POST", SCHOOLS, {"code": f"W{i}", "name": f"W {i}"}) for i in range(writes)],
                                    201)
        update_cpu, _ = await run([("PATCH", f"{SCHOOLS}/{rid}", {"name": f"V {rid}"}) for rid in ids], 200)
        return writes / create_cpu, writes / update_cpu, time.perf_counter() - started


async def _asgi(app: Any, method: str, path: str, body: dict[str, Any] | None, token: str) -> dict[str, Any]:
    raw = json.dumps(body).encode() if body is not None else b""
    scope = {
        "type": "http", "method": method, "path": path, "raw_path": path.encode(), "query_string": b"",
        "headers": [(b"authorization", f"Bearer {token}".encode()), (b"content-type", b"application/json"),
                    (b"content-length", str(len(raw)).encode())],
        "http_version": "1.1", "scheme": "http", "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1),
        "root_path": "",
    }  # fmt: skip
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": raw, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return {"status": sent[0]["status"], "body": json.loads(sent[1]["body"])}


def _in_process(data: str, writes: int) -> tuple[float, float]:
    """(creates/s, updates/s) of the app called directly, from this process's CPU time."""
    app = open_app(SandboxOptions(data=data))
    state = app.state.sandbox
    token = state.tokens.issue(state.tokens.authenticate("sandbox-client", "sandbox-secret"))

    async def run() -> tuple[float, float]:
        ids = []
        cpu = time.process_time()
        for i in range(writes):
            answer = await _asgi(app, "POST", SCHOOLS, {"code": f"P{i}", "name": f"P {i}"}, token)
            ids.append(answer["body"]["data"]["id"])
        create_cpu = time.process_time() - cpu
        cpu = time.process_time()
        for rid in ids:
            await _asgi(app, "PATCH", f"{SCHOOLS}/{rid}", {"name": f"Q {rid}"}, token)
        return writes / create_cpu, writes / (time.process_time() - cpu)

    try:
        return asyncio.run(run())
    finally:
        state.store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=2000, help="creates, then as many updates")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--data", default=":memory:", help="SQLite file of the server (default :memory:)")
    args = parser.parse_args()
    print(f"sandbox writes, {args.writes} creates then {args.writes} updates of schools, database {args.data}; "
          f"{_load()}")
    with serve_in_subprocess(SandboxOptions(data=args.data)) as sandbox:
        creates, updates, wall = asyncio.run(_over_http(sandbox.base_url, args.writes, args.concurrency))
    print(f"  over HTTP (uvicorn, concurrency {args.concurrency}): {creates:6.0f} creates/s, {updates:6.0f} updates/s "
          f"on one core (server CPU per write: {1e6 / creates:.0f} / {1e6 / updates:.0f} µs; wall {wall:.1f} s); "
          f"{_load()}", flush=True)
    creates, updates = _in_process(args.data if args.data == ":memory:" else args.data + ".inproc", args.writes)
    print(f"  in-process (ASGI app called directly): {creates:6.0f} creates/s, {updates:6.0f} updates/s "
          f"(CPU per write: {1e6 / creates:.0f} / {1e6 / updates:.0f} µs); {_load()}")


if __name__ == "__main__":
    main()
