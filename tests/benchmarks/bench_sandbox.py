"""Sandbox throughput: list page 1 vs page 1,000 of a 100,000-record collection, and writes.

    python tests/benchmarks/bench_sandbox.py [--records 100000] [--rounds 5] [--requests 200] [--data FILE]

The server runs in a child process (`serve_in_subprocess`) so client and server do not share a
core's time slices in one interpreter; the client is one keep-alive httpx connection issuing
requests one after another, so the figures are requests per second of a sequential caller.
Pages 1, 2 and 1,000 are measured in rounds of alternating order, side by side in one run.

Over HTTP the client (httpx) costs more than the server, and other processes on the machine add
noise; so the same three pages are also timed in-process, calling the ASGI app directly (no
sockets, no client), which is the server's own cost per request.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable
from typing import Any

import httpx

from loader.sandbox.server import SandboxOptions, open_app, serve_in_subprocess

SUBJECTS = "/institution/catalogue/subjects"
TOKEN_PATH = "/realms/sandbox/protocol/openid-connect/token"


def _seed(records: int) -> dict[str, object]:
    subjects = [{"code": f"S{i:06d}", "name": f"Subject {i}", "access": "Open"} for i in range(records)]
    return {"institution-a": {"subjects": subjects}}


def _rate(count: int, call: Callable[[int], httpx.Response], expect: int) -> float:
    start = time.perf_counter()
    for i in range(count):
        answer = call(i)
        if answer.status_code != expect:
            raise SystemExit(f"unexpected {answer.status_code}: {answer.text[:200]}")
    return count / (time.perf_counter() - start)


async def _asgi_get(app: Any, path: str, query: str, token: str) -> int:
    scope = {
        "type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": query.encode(),
        "headers": [(b"authorization", f"Bearer {token}".encode())], "http_version": "1.1", "scheme": "http",
        "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1), "root_path": "",
    }  # fmt: skip
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return int(sent[0]["status"])


def _server_side_us(options: SandboxOptions, rounds: int, requests: int) -> dict[str, float]:
    """Median microseconds per list request of pages 1, 2 and 1,000, the app called in-process."""
    app = open_app(options)
    state = app.state.sandbox
    token = state.tokens.issue(state.tokens.authenticate("sandbox-client", "sandbox-secret"))
    queries = {
        "1": "",
        "2": "page_token=" + state.page_tokens.make("subjects", "institution-a", {}, 100),
        "1000": "page_token=" + state.page_tokens.make("subjects", "institution-a", {}, 99_900),
    }
    times: dict[str, list[float]] = {name: [] for name in queries}

    async def run() -> None:
        for round_ in range(rounds):
            for name in list(queries) if round_ % 2 == 0 else list(reversed(queries)):
                start = time.perf_counter()
                for _ in range(requests):
                    assert await _asgi_get(app, SUBJECTS, queries[name], token) == 200
                times[name].append((time.perf_counter() - start) / requests * 1e6)

    asyncio.run(run())
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200, help="requests per round and measure")
    parser.add_argument("--data", default=":memory:", help="SQLite file of the server (default :memory:)")
    args = parser.parse_args()

    options = SandboxOptions(data=args.data, seed=_seed(args.records), page_token_ttl=3600.0)
    started = time.perf_counter()
    with serve_in_subprocess(options) as sb, httpx.Client(base_url=sb.base_url, timeout=60) as http:
        ready = time.perf_counter() - started
        form = {"grant_type": "client_credentials", "client_id": sb.client_id, "client_secret": sb.client_secret}
        headers = {"Authorization": f"Bearer {http.post(TOKEN_PATH, data=form).json()['access_token']}"}

        walk_start = time.perf_counter()
        page = http.get(SUBJECTS, headers=headers).json()
        total = page["total"]
        token_2 = page["page_token"]
        for _ in range(998):  # to the token that yields page 1,000
            page = http.get(SUBJECTS, headers=headers, params={"page_token": page["page_token"]}).json()
        walk = time.perf_counter() - walk_start
        token_1000 = page["page_token"]
        page_1000 = http.get(SUBJECTS, headers=headers, params={"page_token": token_1000}).json()
        first_code = page_1000["data"][0]["code"] if page_1000["data"] else None

        # URLs built once, so the client does the same work for each page; page 2 shows what a page
        # token costs by itself, page 1,000 against page 2 what depth costs
        urls = {"1": SUBJECTS, "2": f"{SUBJECTS}?page_token={token_2}", "1000": f"{SUBJECTS}?page_token={token_1000}"}
        rates: dict[str, list[float]] = {name: [] for name in urls}
        for round_ in range(args.rounds):
            order = list(urls) if round_ % 2 == 0 else list(reversed(urls))
            for name in order:
                def get(i: int, url: str = urls[name]) -> httpx.Response:
                    return http.get(url, headers=headers)

                rates[name].append(_rate(args.requests, get, 200))
        create_rate = _rate(
            args.requests * 2,
            lambda i: http.post("/institution/tags", headers=headers, json={"name": f"bench-{i}"}),
            201,
        )
        tag_ids = [t["id"] for t in http.get("/institution/tags", headers=headers).json()["data"]]
        update_rate = _rate(
            len(tag_ids),
            lambda i: http.patch(f"/institution/tags/{tag_ids[i]}", headers=headers, json={"description": f"d{i}"}),
            200,
        )
        stats = sb.stats()

    p1, p2, p1000 = (statistics.median(rates[name]) for name in ("1", "2", "1000"))
    server_us = _server_side_us(SandboxOptions(seed=_seed(args.records)), args.rounds, args.requests)
    print(f"database                  : {args.data}")
    print(f"records in collection     : {total:,} (server ready after {ready:.1f} s, seed included)")
    print(f"walk to page 1,000        : 999 pages in {walk:.1f} s ({999 / walk:.0f} pages/s)")
    print(f"page 1,000 starts at      : {first_code}")
    print(f"list page 1               : {p1:7.0f} requests/s (median of {args.rounds} rounds of {args.requests})")
    print(f"list page 2               : {p2:7.0f} requests/s (same rounds, order alternating)")
    print(f"list page 1,000           : {p1000:7.0f} requests/s (same rounds, order alternating)")
    print(f"page 1,000 / page 1       : {p1000 / p1:7.2f}")
    print(f"page 1,000 / page 2       : {p1000 / p2:7.2f}")
    us_1, us_2, us_1000 = server_us["1"], server_us["2"], server_us["1000"]
    print(f"server side, in-process   : page 1 {us_1:.0f} us, page 2 {us_2:.0f} us, page 1,000 {us_1000:.0f} us")
    print(f"server side 1,000 / 1     : {server_us['1000'] / server_us['1']:7.2f} (time per request)")
    print(f"writes: create (POST)     : {create_rate:7.0f} requests/s ({args.requests * 2} creates)")
    print(f"writes: update (PATCH)    : {update_rate:7.0f} requests/s ({len(tag_ids)} updates)")
    print(f"server counted            : {stats['total']:,} requests")


if __name__ == "__main__":
    main()
