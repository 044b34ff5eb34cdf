"""Client benchmark: paging throughput at injected latency, and requests per second at concurrency.

    python tests/benchmarks/bench_client.py [--records 50000] [--latency-ms 20] [--requests 3000]

The sandbox runs in a child process (`serve_in_subprocess`), so client and server do not share a
GIL. Printed side by side in one run:

1. records/s fetched from one collection of `--records` records at `--latency-ms` injected latency,
   against the floor `pages x latency` (page requests are sequential: each needs the previous token);
   and the same collection at 0 ms, which shows the client's own cost per page.
2. requests/s sustained by ApiClient at concurrency 1 and 8 (single-record GETs, no latency), next to
   a bare httpx.AsyncClient at concurrency 8 sending the same requests with the same token, which
   shows what the client's layers (retries, semaphore, envelope checks, logging) cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from loader.api.client import ApiClient
from loader.config import Environment
from loader.environments import sandbox_environment
from loader.profile import load_profile
from loader.sandbox.server import FaultOptions, RunningSandbox, SandboxOptions, serve_in_subprocess


def _environment(sb: RunningSandbox) -> Environment:
    return sandbox_environment(sb, name="bench")


async def _fetch_all(sb: RunningSandbox) -> tuple[int, float, float, dict[str, int]]:
    """(records, seconds, client CPU seconds, request counts) of fetching the whole collection."""
    async with ApiClient(_environment(sb), load_profile()) as client:
        started, cpu_started = time.perf_counter(), time.process_time()
        records = await client.fetch_collection("school")
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        return len(records), elapsed, cpu, client.request_counts


async def _client_requests(sb: RunningSandbox, concurrency: int, total: int, codes: list[str]) -> tuple[float, float]:
    async with ApiClient(_environment(sb), load_profile(), concurrency=concurrency) as client:
        await client.get("school", codes[0])  # token and environment check outside the timing
        queue = iter(range(total))

        async def worker() -> None:
            for n in queue:
                await client.get("school", codes[n % len(codes)])

        return await _timed(worker, concurrency, total)


async def _bare_httpx_requests(
    sb: RunningSandbox, concurrency: int, total: int, codes: list[str]
) -> tuple[float, float]:
    async with httpx.AsyncClient(base_url=sb.base_url) as http:
        answer = await http.post(
            f"/realms/{sb.realm}/protocol/openid-connect/token",
            data={"grant_type": "client_credentials", "client_id": sb.client_id, "client_secret": sb.client_secret},
        )
        headers = {"Authorization": f"Bearer {answer.json()['access_token']}"}
        queue = iter(range(total))

        async def worker() -> None:
            for n in queue:
                response = await http.get(f"/institution/catalogue/schools/{codes[n % len(codes)]}", headers=headers)
                response.raise_for_status()
                response.json()

        return await _timed(worker, concurrency, total)


async def _timed(worker: Any, concurrency: int, total: int) -> tuple[float, float]:
    """(requests/s, client CPU ms per request) of `concurrency` workers sharing `total` requests."""
    started, cpu_started = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    return total / elapsed, 1000 * cpu / total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each request-rate measurement")
    args = parser.parse_args()

    codes = [f"B{i:06d}" for i in range(args.records)]
    seed = {"institution-a": {"schools": [{"code": c, "name": f"Bench school {c}"} for c in codes]}}
    with tempfile.TemporaryDirectory(prefix="bench-client-") as tmp:
        seed_file = Path(tmp) / "seed.json"
        seed_file.write_text(json.dumps(seed), encoding="utf-8")
        options = SandboxOptions(data=str(Path(tmp) / "bench.sqlite3"), seed=seed_file)
        print(f"seeding {args.records} records into a sandbox in a child process ...", flush=True)
        started = time.perf_counter()
        with serve_in_subprocess(options) as sb:
            print(f"  ready in {time.perf_counter() - started:.1f} s\n", flush=True)
            pages = math.ceil(args.records / 100)
            floor_s = pages * args.latency_ms / 1000

            print(f"1. paging {args.records} records ({pages} pages of 100)")
            for latency in (args.latency_ms, 0.0):
                sb.set_faults(FaultOptions(latency_ms=latency))
                count, elapsed, cpu, counts = asyncio.run(_fetch_all(sb))
                assert count == args.records, f"fetched {count} of {args.records}"
                rate = count / elapsed
                line = f"   latency {latency:>5.1f} ms: {rate:>8,.0f} records/s, {elapsed:6.2f} s, {counts['GET']} GETs"
                line += f", client CPU {1000 * cpu / counts['GET']:.1f} ms per page"
                if latency:
                    line += f"; floor pages x latency = {floor_s:.2f} s -> {floor_s / elapsed:.0%} of the floor's speed"
                    line += f", {1000 * (elapsed - floor_s) / pages:.1f} ms client+server overhead per page"
                print(line, flush=True)
            sb.set_faults(FaultOptions())

            print(f"\n2. single-record GETs, {args.requests} per run, no injected latency; runs interleaved, median")
            runs = (
                ("ApiClient, concurrency 1", _client_requests, 1),
                ("ApiClient, concurrency 8", _client_requests, 8),
                ("bare httpx, concurrency 8", _bare_httpx_requests, 8),
            )
            results: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in runs}
            for _ in range(args.repeat):
                for label, runner, concurrency in runs:
                    results[label].append(asyncio.run(runner(sb, concurrency, args.requests, codes)))
            for label, measured in results.items():
                rates = sorted(rate for rate, _ in measured)
                cpu_ms = statistics.median(cpu for _, cpu in measured)
                print(
                    f"   {label:<26} {statistics.median(rates):>8,.0f} requests/s "
                    f"(range {rates[0]:,.0f}-{rates[-1]:,.0f}), {cpu_ms:.2f} ms client CPU per request",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
