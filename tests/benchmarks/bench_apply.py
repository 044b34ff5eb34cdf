"""Benchmark of `loader.apply` against the sandbox in a child process at 20 ms latency.

For N creates and N updates (default N = 10,000; `--records N` for a shorter run), measured side
by side in one run, taking turns `--repeat` times at each concurrency:

- with `--baseline DIR`, the executor of another source tree (the tree before, a `git archive` of
  it), run in a child process with DIR on PYTHONPATH, against the same sandbox;
- the executor (`apply_plan` over a plan built directly, planning not included);
- a bare aiohttp loop sending the same POSTs and PATCHes at the same concurrency through one
  session and a pool of the client's size (aiohttp is the transport under the loader's client):
  the ceiling, with no graph, no results, no retries;
- a bare async httpx loop doing the same (`--skip-httpx` leaves it out);
- a straightforward sequential script a user might write (for each row: GET by code, then POST
  or PATCH), once, at concurrency 1 by nature (`--skip-sequential` leaves it out).

Each figure is printed with the client's CPU per write (the sandbox's is not counted) and the
load average.

Run: python tests/benchmarks/bench_apply.py [--records N] [--concurrency 1,8,32] [--latency-ms 20]
                                            [--repeat 3] [--baseline /tmp/before_tree]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, as pytest's pythonpath

from helpers.apply import (
    PROFILE,
    client_for,
    existing_schools_seed,
    school_writes,
    school_writes_plan,
)

from loader.apply.executor import ApplyOptions, apply_plan
from loader.apply.results import Outcome
from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_subprocess

SCHOOLS = "/institution/catalogue/schools"


async def _executor(sandbox: Any, n: int, concurrency: int, tag: str) -> tuple[float, float]:
    plan = school_writes_plan(n, tag)
    async with client_for(sandbox, concurrency=concurrency) as client:
        started, cpu = time.perf_counter(), time.process_time()
        results = await apply_plan(plan, client, PROFILE, ApplyOptions(concurrency=concurrency))
        elapsed = time.perf_counter() - started, time.process_time() - cpu
    bad = [r for r in results.records if r.outcome not in (Outcome.CREATED, Outcome.UPDATED)]
    if bad:
        raise SystemExit(f"executor run {tag} had {len(bad)} records not applied: {bad[0]}")
    return elapsed


def _executor_of(tree: Path, sandbox: Any, n: int, concurrency: int, tag: str) -> tuple[float, float]:
    """`_executor` run in a child process with another source tree on PYTHONPATH (the tree before)."""
    environ = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, __file__, "--child", sandbox.base_url, str(n), str(concurrency), tag],
        env=environ, cwd=tree.parent, capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the executor of {tree} failed:\n{done.stderr[-3000:]}")
    wall, cpu = json.loads(done.stdout.strip().splitlines()[-1])
    return float(wall), float(cpu)


def _child(base_url: str, n: str, concurrency: str, tag: str) -> None:
    from loader.sandbox.server import RunningSandbox

    print(json.dumps(asyncio.run(_executor(RunningSandbox(base_url=base_url), int(n), int(concurrency), tag))))


def _token(sandbox: Any) -> str:
    answer = httpx.post(
        f"{sandbox.auth_url}/realms/{sandbox.realm}/protocol/openid-connect/token",
        data={"grant_type": "client_credentials", "client_id": sandbox.client_id,
              "client_secret": sandbox.client_secret},
    )
    answer.raise_for_status()
    return str(answer.json()["access_token"])


STALLS: list[str] = []  # transport errors met by the bare loop and the script (re-sent; reported)


async def _send_stubbornly(http: httpx.AsyncClient, method: str, path: str, body: dict[str, Any]) -> None:
    """One request; re-sent after a transport error (a 409 then means the first one landed)."""
    for _ in range(5):
        try:
            answer = await http.request(method, path, json=body)
        except httpx.TransportError as error:
            STALLS.append(f"{method} {path}: {type(error).__name__}")
            continue
        if answer.status_code != 409:
            answer.raise_for_status()
        return
    raise SystemExit(f"bare loop: {method} {path} kept failing")


async def _bare_aiohttp(sandbox: Any, n: int, concurrency: int, tag: str) -> tuple[float, float]:
    """The same writes through one aiohttp session (the transport under the loader's client), a
    connection pool of the client's size and `concurrency` workers: no graph, results or retries."""
    creates, updates = school_writes(n, tag)
    work: list[tuple[str, str, dict[str, Any]]] = [("POST", SCHOOLS, c) for c in creates]
    work += [("PATCH", f"{SCHOOLS}/{rid}", payload) for rid, payload in updates]
    headers = {"Authorization": f"Bearer {_token(sandbox)}", "Accept": "application/json"}
    connector = aiohttp.TCPConnector(limit=concurrency + 2)  # as ApiClient's pool
    async with aiohttp.ClientSession(sandbox.base_url, headers=headers, connector=connector) as session:
        items = iter(work)

        async def worker() -> None:
            for method, path, body in items:
                for _ in range(5):
                    try:
                        async with session.request(method, path, json=body) as answer:
                            await answer.read()
                            if answer.status != 409:
                                answer.raise_for_status()
                        break
                    except (aiohttp.ClientConnectionError, TimeoutError) as error:
                        STALLS.append(f"{method} {path}: {type(error).__name__}")
                else:
                    raise SystemExit(f"bare aiohttp loop: {method} {path} kept failing")

        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started, time.process_time() - cpu


async def _bare_loop(sandbox: Any, n: int, concurrency: int, tag: str) -> tuple[float, float]:
    creates, updates = school_writes(n, tag)
    work: list[tuple[str, str, dict[str, Any]]] = [("POST", SCHOOLS, c) for c in creates]
    work += [("PATCH", f"{SCHOOLS}/{rid}", payload) for rid, payload in updates]
    headers = {"Authorization": f"Bearer {_token(sandbox)}"}
    limits = httpx.Limits(max_connections=concurrency + 2, max_keepalive_connections=concurrency + 2)  # as ApiClient
    queue: asyncio.Queue[tuple[str, str, dict[str, Any]]] = asyncio.Queue()
    for item in work:
        queue.put_nowait(item)
    async with httpx.AsyncClient(base_url=sandbox.base_url, headers=headers, limits=limits, timeout=30) as http:

        async def worker() -> None:
            while not queue.empty():
                method, path, body = queue.get_nowait()
                await _send_stubbornly(http, method, path, body)

        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started, time.process_time() - cpu


def _sequential_script(sandbox: Any, n: int, tag: str) -> tuple[float, float]:
    """What a user might write: one row at a time, look the record up by code, then create or update."""
    creates, _ = school_writes(n, tag)
    rows = [(c["code"], c["name"]) for c in creates] + [(f"U{i}", f"Updated {tag} {i}") for i in range(n)]
    headers = {"Authorization": f"Bearer {_token(sandbox)}"}
    with httpx.Client(base_url=sandbox.base_url, headers=headers, timeout=30) as http:
        started, cpu = time.perf_counter(), time.process_time()
        for code, name in rows:
            for _ in range(5):  # a user's script would crash here; we re-run the row and report it
                try:
                    found = http.get(f"{SCHOOLS}/{code}")
                    if found.status_code == 404:
                        http.post(SCHOOLS, json={"code": code, "name": name}).raise_for_status()
                    else:
                        found.raise_for_status()
                        http.patch(f"{SCHOOLS}/{found.json()['data']['id']}", json={"name": name}).raise_for_status()
                    break
                except httpx.TransportError as error:
                    STALLS.append(f"script row {code}: {type(error).__name__}")
        return time.perf_counter() - started, time.process_time() - cpu


def _load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def _timed_print(label: str, times: tuple[float, float], writes: int) -> float:
    """Prints wall time, writes/s and the client's CPU per write (the sandbox's is not counted)."""
    seconds, cpu = times
    print(f"  {label:<26} {seconds:8.2f} s {writes / seconds:6.0f} writes/s  "
          f"client CPU {1e6 * cpu / writes:5.0f} µs/write  {_load()}", flush=True)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000, help="creates, and as many updates (default 10000)")
    parser.add_argument("--concurrency", default="32,8,1", help="comma-separated, run in this order (default 32,8,1)")
    parser.add_argument("--repeat", type=int, default=1, help="interleaved runs of each side per concurrency")
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--skip-sequential", action="store_true", help="leave out the sequential script")
    parser.add_argument("--skip-httpx", action="store_true", help="leave out the bare httpx loop")
    parser.add_argument("--baseline", type=Path, help="a source tree whose executor runs first each turn")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(*args.child)
        return 0
    n = args.records
    levels = [int(c) for c in args.concurrency.split(",")]
    seed = existing_schools_seed(n)
    options = SandboxOptions(seed=seed, faults=FaultOptions(latency_ms=args.latency_ms))
    print(f"sandbox in a child process, latency {args.latency_ms:g} ms; {n} creates + {n} updates per run; {_load()}")
    table: dict[int, list[tuple[float, float, float | None, float | None]]] = {}
    with serve_in_subprocess(options) as sandbox:
        run = 0
        for c in levels:
            print(f"concurrency {c}:")
            for _ in range(args.repeat):
                run += 1
                tags = (f"x{run}", f"a{run}", f"b{run}")
                before = None if args.baseline is None else _timed_print(
                    "executor of the tree before", _executor_of(args.baseline, sandbox, n, c, f"p{run}"), 2 * n)
                ours = _timed_print("executor (apply_plan)", asyncio.run(_executor(sandbox, n, c, tags[0])), 2 * n)
                bare = _timed_print("bare aiohttp loop", asyncio.run(_bare_aiohttp(sandbox, n, c, tags[1])), 2 * n)
                httpx_s = None if args.skip_httpx else _timed_print(
                    "bare async httpx loop", asyncio.run(_bare_loop(sandbox, n, c, tags[2])), 2 * n)
                table.setdefault(c, []).append((ours, bare, httpx_s, before))
        script = None
        if not args.skip_sequential:
            print("sequential script (GET by code, then POST or PATCH, per row):")
            script = _timed_print("sequential script", _sequential_script(sandbox, n, "s"), 2 * n)
    print(f"\nsummary (wall time, medians of {args.repeat} runs; ratios > 1 mean the executor is slower; {_load()}):")
    print(f"  {'concurrency':>11}  {'before s':>8}  {'executor s':>10}  {'aiohttp s':>9}  {'httpx s':>8}"
          f"  {'before/aiohttp':>14}  {'executor/aiohttp':>16}  {'script/executor':>15}")
    for c, runs in table.items():
        ours = statistics.median(r[0] for r in runs)
        bare = statistics.median(r[1] for r in runs)
        ratio = statistics.median(r[0] / r[1] for r in runs)
        httpx_text = f"{statistics.median(r[2] for r in runs if r[2]):8.2f}" if not args.skip_httpx else f"{'-':>8}"
        vs_script = f"{script / ours:15.1f}" if script else f"{'-':>15}"
        if args.baseline is None:
            before_s, before_ratio = f"{'-':>8}", f"{'-':>14}"
        else:
            before_s = f"{statistics.median(r[3] for r in runs if r[3]):8.2f}"
            before_ratio = f"{statistics.median(r[3] / r[1] for r in runs if r[3]):14.2f}"
        print(f"  {c:>11}  {before_s}  {ours:10.2f}  {bare:9.2f}  {httpx_text}  {before_ratio}  {ratio:16.2f}"
              f"  {vs_script}")
    if STALLS:
        print(f"transport errors met (and re-sent) outside the executor: {len(STALLS)}, e.g. {STALLS[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
