"""`loader apply MAPPING --yes` as a user runs it, against a hand-tuned async script doing the same work.

N creates (default 2,000) from a CSV file, at concurrency 8, against the sandbox in a child process
at 20 ms latency. Each side runs as a fresh process (start-up, reading the file, planning and
applying all count) against a fresh sandbox with the same seed, and the three sides take turns
run by run:

- `loader apply schools.yaml --yes` with the tree before (`--baseline DIR`, a `git archive` of
  it, on PYTHONPATH), when given;
- `loader apply schools.yaml --yes` with this tree;
- with `--history-off`, the same with `history: false` in loader.yaml: the history's share of an
  apply (journaling each write, folding the journal at the end) is the difference;
- SCRIPT below, what a user who knows asyncio would write: one aiohttp session, a connection pool
  and a semaphore of the same size, per row a GET by code and a POST when it is absent.

Printed per run: wall time from spawn to exit, the process's CPU time, and the load average; then
medians and ratios. Bytecode is cached (under --out) as an installed package has it, whatever
PYTHONDONTWRITEBYTECODE says, and the start-up of each tree is measured first. The loader plans
from list pages (one GET per 100 live records) where the script sends one GET per row.

    python tests/benchmarks/bench_apply_cli.py [--records 2000] [--concurrency 8] [--latency-ms 20]
                                               [--repeat 3] [--baseline /tmp/before_tree] [--history-off]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SCRIPT = '''\
"""Create the schools of a CSV file that the service does not have yet (GET by code, then POST)."""
import asyncio, csv, os, sys
from urllib.parse import quote

import aiohttp

BASE, AUTH, REALM, CONCURRENCY = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
SCHOOLS = BASE + "/institution/catalogue/schools"


async def main() -> None:
    with open("schools.csv", newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    form = {"grant_type": "client_credentials", "client_id": os.environ["BENCH_CLIENT_ID"],
            "client_secret": os.environ["BENCH_CLIENT_SECRET"]}
    connector = aiohttp.TCPConnector(limit=CONCURRENCY)
    async with aiohttp.ClientSession(connector=connector) as session:
        async with session.post(f"{AUTH}/realms/{REALM}/protocol/openid-connect/token", data=form) as answer:
            answer.raise_for_status()
            token = (await answer.json())["access_token"]
        session.headers["Authorization"] = f"Bearer {token}"
        limit = asyncio.Semaphore(CONCURRENCY)

        async def one(row: dict[str, str]) -> None:
            async with limit:
                async with session.get(f"{SCHOOLS}/{quote(row['Code'], safe='')}") as found:
                    await found.read()
                    if found.status != 404:
                        found.raise_for_status()
                        return
                async with session.post(SCHOOLS, json={"code": row["Code"], "name": row["Name"]}) as made:
                    await made.read()
                    made.raise_for_status()

        await asyncio.gather(*(one(row) for row in rows))


asyncio.run(main())
'''

HISTORY_OFF = "history off"
MAPPING = """version: 1
source: schools.csv
entities:
  schools:
    entity: school
    key: [code]
    fields:
      code: Code
      name: Name
"""


def _project(root: Path, tag: str, n: int, sandbox: Any, concurrency: int, history: bool) -> Path:
    folder = root / tag
    shutil.rmtree(folder, ignore_errors=True)  # a history left by an earlier run describes another sandbox
    folder.mkdir(parents=True)
    rows = "".join(f"{tag}{i:06d},School {tag} {i}\n" for i in range(n))
    (folder / "schools.csv").write_text("Code,Name\n" + rows, encoding="utf-8")
    (folder / "schools.yaml").write_text(MAPPING, encoding="utf-8")
    (folder / "loader.yaml").write_text(
        f"default_environment: bench\nconcurrency: {concurrency}\n{'' if history else 'history: false' + chr(10)}"
        "environments:\n  bench:\n"
        f"    base_url: {sandbox.base_url}\n    auth_url: {sandbox.auth_url}\n"
        f"    realm: {sandbox.realm}\n    expect_environment: sandbox\n"
        "    client_id: {env: BENCH_CLIENT_ID}\n    client_secret: {env: BENCH_CLIENT_SECRET}\n",
        encoding="utf-8",
    )
    (folder / "create_schools.py").write_text(SCRIPT, encoding="utf-8")
    return folder


def _run(command: list[str], folder: Path, environ: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process, from spawn to exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=folder, env=environ, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def _side(label: str, n: int, concurrency: int, latency_ms: float, root: Path, tag: str,
          command: list[str], environ: dict[str, str], history: bool) -> tuple[float, float]:
    """One run of one side against a fresh sandbox (`history`: false sets `history: false`); checks
    that it created every record."""
    from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_subprocess

    options = SandboxOptions(faults=FaultOptions(latency_ms=latency_ms))
    with serve_in_subprocess(options) as sandbox:
        folder = _project(root, tag, n, sandbox, concurrency, history)
        if command[-1] == "create_schools.py":
            command = [*command, sandbox.base_url, sandbox.auth_url, sandbox.realm, str(concurrency)]
        environ = {**environ, "BENCH_CLIENT_ID": sandbox.client_id, "BENCH_CLIENT_SECRET": sandbox.client_secret}
        sandbox.reset_stats()
        wall, cpu = _run(command, folder, environ)
        created = sum(v for k, v in sandbox.stats()["requests"].items() if k.startswith("POST ") and "school" in k)
    if created != n:
        raise SystemExit(f"{label} sent {created} creates, not {n}")
    print(f"  {label:<28} {wall:7.2f} s  CPU {cpu:6.2f} s  {_load()}", flush=True)
    return wall, cpu


def _startups(trees: list[tuple[str, dict[str, str]]], folder: Path, rounds: int = 5) -> None:
    """`python -m loader apply --help` (its imports and argument parsing) for each tree, taking turns,
    in `folder` (not a checkout: `-m` finds a package in the current folder before PYTHONPATH);
    prints the median wall and CPU time of each."""
    folder.mkdir(parents=True, exist_ok=True)
    times: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in trees}
    for _ in range(rounds):
        for label, environ in trees:
            times[label].append(_run([sys.executable, "-m", "loader", "apply", "--help"], folder, environ))
    for label, runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"  start-up of {label} (`python -m loader apply --help`, median of {rounds}): "
              f"{wall:.2f} s, CPU {cpu:.2f} s  {_load()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=2000, help="creates per run (default 2000)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side, taking turns")
    parser.add_argument("--baseline", type=Path, help="a source tree run first each turn (on PYTHONPATH)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench_apply_cli"))
    parser.add_argument("--history-off", action="store_true", help="also this tree with `history: false`")
    args = parser.parse_args(argv)
    # Bytecode cached as an installed package has it (in a folder of the benchmark's, for both trees).
    here = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    here["PYTHONPYCACHEPREFIX"] = str(args.out / "pycache")
    sides: list[tuple[str, list[str], dict[str, str], bool]] = []  # label, command, environment, history
    if args.baseline:
        sides.append(("loader apply (before)", [sys.executable, "-m", "loader", "apply", "schools.yaml", "--yes"],
                      {**here, "PYTHONPATH": str(args.baseline)}, True))
    sides.append(("loader apply (this tree)", [sys.executable, "-m", "loader", "apply", "schools.yaml", "--yes"],
                  here, True))
    if args.history_off:
        sides.append((f"loader apply ({HISTORY_OFF})", [sys.executable, "-m", "loader", "apply", "schools.yaml",
                                                         "--yes"], here, False))
    sides.append(("hand-tuned aiohttp script", [sys.executable, "create_schools.py"], here, True))
    print(f"{args.records} creates at concurrency {args.concurrency}, {args.latency_ms:g} ms latency; "
          f"a fresh sandbox and process per run; {_load()}")
    _startups([(label, environ) for label, _, environ, history in sides[:-1] if history], args.out)
    figures: dict[str, list[tuple[float, float]]] = {label: [] for label, *_ in sides}
    for turn in range(args.repeat):
        print(f"turn {turn + 1}:")
        for index, (label, command, environ, history) in enumerate(sides):
            tag = f"T{turn}S{index}"
            figures[label].append(_side(label, args.records, args.concurrency, args.latency_ms, args.out, tag,
                                        command, environ, history))
    script = statistics.median(wall for wall, _ in figures[sides[-1][0]])
    print(f"\nsummary (medians of {args.repeat}; {_load()}):")
    print(f"  {'side':<28} {'wall s':>7} {'CPU s':>6} {'script/side':>11}")
    for label, runs in figures.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"  {label:<28} {wall:7.2f} {cpu:6.2f} {script / wall:11.2f}")
    print("  (script/side >= 1: the side is at least as fast as the script)")
    if args.history_off:
        on = statistics.median(w for w, _ in figures["loader apply (this tree)"])
        off = statistics.median(w for w, _ in figures[f"loader apply ({HISTORY_OFF})"])
        print(f"  the history's share of this tree's apply: {(on - off) / on:+.1%} of its wall time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
