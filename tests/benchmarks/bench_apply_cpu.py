"""Client CPU per write: the executor (`apply_plan` through ApiClient) against bare httpx and aiohttp loops.

Wall time on a shared machine says more about the neighbours than about the loader, so this
measures the client process's CPU time (`time.process_time`: the sandbox runs in a child process
and is not counted) per write, for the executor and for a bare async httpx loop sending the same
POSTs and PATCHes at the same concurrency, interleaved run by run in one process, and prints the
ratio (the issue's target: executor <= 1.2x the bare loop at concurrency 8 and 32). A third side,
the same bare loop sent through the loader's own transport (`loader.api.transport`, aiohttp below
httpx's interface), shows what the executor and ApiClient cost on top of the transport; a fourth, a
bare aiohttp loop (one session, the client's pool size), what the same writes cost with nothing but
aiohttp. The machine's load average is printed beside every figure.

    python tests/benchmarks/bench_apply_cpu.py [--records 1000] [--concurrency 8,32] [--repeat 3]
                                               [--latency-ms 20] [--profile FILE]

`--profile FILE` runs one more executor run under cProfile and writes its stats to FILE.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import statistics
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
    existing_school_id,
    school_writes,
    school_writes_plan,
)

from loader.api.transport import AiohttpTransport
from loader.apply.executor import ApplyOptions, apply_plan
from loader.apply.results import Outcome
from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_subprocess

SCHOOLS = "/institution/catalogue/schools"


async def _executor(sandbox: Any, n: int, concurrency: int, tag: str, profiler: cProfile.Profile | None) -> float:
    """CPU seconds of one apply_plan run (the plan is built before the clock starts)."""
    plan = school_writes_plan(n, tag)
    async with client_for(sandbox, concurrency=concurrency) as client:
        await client.get("school", existing_school_id(0))  # token and environment check outside the timing
        if profiler:
            profiler.enable()
        cpu = time.process_time()
        results = await apply_plan(plan, client, PROFILE, ApplyOptions(concurrency=concurrency))
        cpu = time.process_time() - cpu
        if profiler:
            profiler.disable()
    bad = [r for r in results.records if r.outcome not in (Outcome.CREATED, Outcome.UPDATED)]
    if bad:
        raise SystemExit(f"executor run {tag} had {len(bad)} records not applied: {bad[0]}")
    return cpu


async def _bare_aiohttp(sandbox: Any, n: int, concurrency: int, tag: str) -> float:
    """CPU seconds of a bare aiohttp loop sending the same writes (the transport under ApiClient)."""
    creates, updates = school_writes(n, tag)
    work: list[tuple[str, str, dict[str, Any]]] = [("POST", SCHOOLS, c) for c in creates]
    work += [("PATCH", f"{SCHOOLS}/{rid}", payload) for rid, payload in updates]
    async with aiohttp.ClientSession(sandbox.base_url, connector=aiohttp.TCPConnector(limit=concurrency + 2)) as http:
        form = {"grant_type": "client_credentials", "client_id": sandbox.client_id,
                "client_secret": sandbox.client_secret}
        async with http.post(f"/realms/{sandbox.realm}/protocol/openid-connect/token", data=form) as answer:
            http.headers["Authorization"] = f"Bearer {(await answer.json())['access_token']}"
        items = iter(work)

        async def worker() -> None:
            for method, path, body in items:
                async with http.request(method, path, json=body) as response:
                    response.raise_for_status()
                    await response.json()

        cpu = time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.process_time() - cpu


async def _bare_loop(sandbox: Any, n: int, concurrency: int, tag: str, ours: bool = False) -> float:
    """CPU seconds of a bare httpx loop sending the same writes (no graph, results, retries, logging).

    `ours`: through the loader's transport (loader.api.transport) instead of httpx's default one.
    """
    creates, updates = school_writes(n, tag)
    work: list[tuple[str, str, dict[str, Any]]] = [("POST", SCHOOLS, c) for c in creates]
    work += [("PATCH", f"{SCHOOLS}/{rid}", payload) for rid, payload in updates]
    limits = httpx.Limits(max_connections=concurrency + 2, max_keepalive_connections=concurrency + 2)  # as ApiClient
    transport = AiohttpTransport(trust_env=False, limits=limits) if ours else None
    async with httpx.AsyncClient(base_url=sandbox.base_url, limits=limits, timeout=30, transport=transport) as http:
        answer = await http.post(
            f"/realms/{sandbox.realm}/protocol/openid-connect/token",
            data={"grant_type": "client_credentials", "client_id": sandbox.client_id,
                  "client_secret": sandbox.client_secret},
        )
        http.headers["Authorization"] = f"Bearer {answer.json()['access_token']}"
        items = iter(work)

        async def worker() -> None:
            for method, path, body in items:
                response = await http.request(method, path, json=body)
                response.raise_for_status()
                response.json()

        cpu = time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.process_time() - cpu


def _load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1000, help="creates, and as many updates, per run")
    parser.add_argument("--concurrency", default="8,32")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of each side per concurrency")
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--profile", type=Path, help="write cProfile stats of one more executor run here")
    args = parser.parse_args(argv)
    n = args.records
    levels = [int(c) for c in args.concurrency.split(",")]
    total = 2 * n * args.repeat * len(levels) * 4
    seed = {"institution-a": {"schools": [{"id": existing_school_id(i), "code": f"U{i}", "name": f"Existing {i}"}
                                          for i in range(n)]}}
    options = SandboxOptions(seed=seed, faults=FaultOptions(latency_ms=args.latency_ms))
    print(f"sandbox in a child process, latency {args.latency_ms:g} ms; {n} creates + {n} updates per run, "
          f"{args.repeat} interleaved runs per side; client CPU time (process_time) per write; {_load()}")
    summary: list[str] = []
    with serve_in_subprocess(options) as sandbox:
        run = 0
        for c in levels:
            ours: list[float] = []
            bare: list[float] = []
            same: list[float] = []
            plain: list[float] = []
            for _ in range(args.repeat):
                run += 1
                ours.append(asyncio.run(_executor(sandbox, n, c, f"x{c}-{run}", None)) / (2 * n))
                bare.append(asyncio.run(_bare_loop(sandbox, n, c, f"b{c}-{run}")) / (2 * n))
                same.append(asyncio.run(_bare_loop(sandbox, n, c, f"t{c}-{run}", ours=True)) / (2 * n))
                plain.append(asyncio.run(_bare_aiohttp(sandbox, n, c, f"a{c}-{run}")) / (2 * n))
                print(f"  concurrency {c:>2} run {run}: executor {1e6 * ours[-1]:6.0f} µs/write, "
                      f"bare httpx {1e6 * bare[-1]:6.0f}, bare over our transport {1e6 * same[-1]:6.0f}, "
                      f"bare aiohttp {1e6 * plain[-1]:6.0f}; executor/bare aiohttp {ours[-1] / plain[-1]:.2f}; "
                      f"{_load()}", flush=True)
            ratio = statistics.median(o / b for o, b in zip(ours, bare, strict=True))
            own = statistics.median(o / b for o, b in zip(ours, same, strict=True))
            raw = statistics.median(o / b for o, b in zip(ours, plain, strict=True))
            summary.append(f"  concurrency {c:>2}: executor {1e6 * statistics.median(ours):5.0f} µs/write, "
                           f"bare httpx {1e6 * statistics.median(bare):5.0f}, "
                           f"bare over our transport {1e6 * statistics.median(same):5.0f}, "
                           f"bare aiohttp {1e6 * statistics.median(plain):5.0f}; executor/bare httpx {ratio:.2f}, "
                           f"executor/bare over our transport {own:.2f}, executor/bare aiohttp {raw:.2f} "
                           f"(medians of {args.repeat} side-by-side ratios)")
        if args.profile:
            profiler = cProfile.Profile(time.process_time)  # CPU, not wall time
            asyncio.run(_executor(sandbox, n, levels[0], "profile", profiler))
            profiler.dump_stats(str(args.profile))
            print(f"  profile of one executor run at concurrency {levels[0]} written to {args.profile}")
    print(f"summary ({_load()}; {total} writes measured):")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
