"""Sandbox throughput: list page 1 vs page 1,000 of a 100,000-record collection, and writes.

    python tests/benchmarks/bench_sandbox.py [--records 100000] [--rounds 5] [--requests 200]

The server runs in a child process (`serve_in_subprocess`) so client and server do not share a
core's time slices in one interpreter; the client is one keep-alive httpx connection issuing
requests one after another, so the figures are requests per second of a sequential caller.
Page 1 and page 1,000 are measured in alternating rounds, side by side in one run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import httpx

from loader.sandbox.server import SandboxOptions, serve_in_subprocess

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200, help="requests per round and measure")
    args = parser.parse_args()

    options = SandboxOptions(seed=_seed(args.records), page_token_ttl=3600.0)
    started = time.perf_counter()
    with serve_in_subprocess(options) as sb, httpx.Client(base_url=sb.base_url, timeout=60) as http:
        ready = time.perf_counter() - started
        form = {"grant_type": "client_credentials", "client_id": sb.client_id, "client_secret": sb.client_secret}
        headers = {"Authorization": f"Bearer {http.post(TOKEN_PATH, data=form).json()['access_token']}"}

        walk_start = time.perf_counter()
        page = http.get(SUBJECTS, headers=headers).json()
        total = page["total"]
        for _ in range(998):  # to the token that yields page 1,000
            page = http.get(SUBJECTS, headers=headers, params={"page_token": page["page_token"]}).json()
        walk = time.perf_counter() - walk_start
        token_1000 = page["page_token"]
        page_1000 = http.get(SUBJECTS, headers=headers, params={"page_token": token_1000}).json()
        first_code = page_1000["data"][0]["code"] if page_1000["data"] else None

        # both URLs built once, so the client does the same work for either page
        url_1, url_1000 = SUBJECTS, f"{SUBJECTS}?page_token={token_1000}"
        first_rates, late_rates = [], []
        for _ in range(args.rounds):
            first_rates.append(_rate(args.requests, lambda i: http.get(url_1, headers=headers), 200))
            late_rates.append(_rate(args.requests, lambda i: http.get(url_1000, headers=headers), 200))
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

    p1, p1000 = statistics.median(first_rates), statistics.median(late_rates)
    print(f"records in collection     : {total:,} (server ready after {ready:.1f} s, seed included)")
    print(f"walk to page 1,000        : 999 pages in {walk:.1f} s ({999 / walk:.0f} pages/s)")
    print(f"page 1,000 starts at      : {first_code}")
    print(f"list page 1               : {p1:7.0f} requests/s (median of {args.rounds} rounds of {args.requests})")
    print(f"list page 1,000           : {p1000:7.0f} requests/s (same rounds, alternating)")
    print(f"page 1,000 / page 1       : {p1000 / p1:7.2f}")
    print(f"writes: create (POST)     : {create_rate:7.0f} requests/s ({args.requests * 2} creates)")
    print(f"writes: update (PATCH)    : {update_rate:7.0f} requests/s ({len(tag_ids)} updates)")
    print(f"server counted            : {stats['total']:,} requests")


if __name__ == "__main__":
    main()
