"""Peak RSS of `loader plan --out plan.json` and of `loader apply --plan plan.json`, through the CLI.

    python tests/benchmarks/bench_apply_memory.py [--sizes 250000] [--concurrency 64] [--latency-ms 0]
                                                  [--data /tmp/bench_plan] [--work /tmp/bench_applymem]

The workload is bench_plan's (two workbooks, two mapping files, a seed holding 70% of the records
live, a tenth of those with another name), generated under --data or reused from there (read only:
the workbooks and mappings are copied into --work/<size>/). Per size: the sandbox runs in a
subprocess with --latency-ms per request, seeded into a fresh SQLite file under --work; a
loader.yaml there names it as environment `bench`, its secret read from LOADER_BENCH_SECRET. Then

    loader plan curriculum.yaml applicants.yaml --env bench --out plan.json
    loader apply --plan plan.json --env bench --yes --concurrency N

each run as its own child process under a small wrapper process that prints
`getrusage(RUSAGE_CHILDREN).ru_maxrss` once the command has finished: the peak RSS of the
largest process of that command's tree (for the plan: the planner or its reading child, whichever
is larger; the apply has no children). Prints desired records, the plan's creates and updates,
the writes the apply made (created + updated, from its summary's total line), wall time and peak
RSS of each command, and the 1-min load average (mean of before and after; the machine is shared,
so wall times are noisy, peak RSS is not). The issue's budget: plan <= 1 GB, apply <= 1.5 GB at
250,000 records.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_plan, beside this file

import bench_plan

SECRET_VARIABLE = "LOADER_BENCH_SECRET"
INPUTS = ("curriculum.xlsx", "applicants.xlsx", "curriculum.yaml", "applicants.yaml")
TOTAL = re.compile(r"^\s*total\s+([\d,]+) created, ([\d,]+) updated, ([\d,]+) unchanged, ([\d,]+) skipped.*?, "
                   r"([\d,]+) failed", re.MULTILINE)


def measured(command: list[str], cwd: Path, log: Path) -> None:
    """Wrapper process: run `command`, its output to `log`; print its tree's peak RSS (KiB) and wall time."""
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, check=False)
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    print(json.dumps({"rc": done.returncode, "peak_kib": peak, "wall_s": wall}))


def _run(name: str, args: list[str], work: Path, environ: dict[str, str]) -> dict[str, Any]:
    """One loader command in its own wrapper process; its figures, its output's text."""
    log = work / f"{name}.log"
    command = [sys.executable, "-m", "loader", *args]
    done = subprocess.run([sys.executable, __file__, "--measure", str(work), str(log), "--", *command],
                          capture_output=True, text=True, check=True, env=environ)
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    figures["output"] = log.read_text(encoding="utf-8")
    if figures["rc"] not in (0, 2):
        tail = "\n".join(figures["output"].splitlines()[-30:])
        raise SystemExit(f"`loader {' '.join(args)}` exited {figures['rc']}:\n{tail}")
    return figures


def _plan_counts(plan_json: Path) -> dict[str, int]:
    """Desired records and the plan's creates and updates (read in this process, after both runs)."""
    data = json.loads(plan_json.read_text(encoding="utf-8"))
    records = [r for b in data["blocks"] for r in b["records"]]
    return {
        "desired": len(records),
        "create": sum(r["action"] == "create" and not r["blocked"] for r in records),
        "update": sum(r["action"] == "update" and not r["blocked"] for r in records),
        "errors": sum(any(f["severity"] == "error" for f in r["findings"]) for r in records),
    }


def measure(n: int, data: Path, work_root: Path, concurrency: int, latency_ms: float) -> dict[str, Any]:
    from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_subprocess

    root = bench_plan.generate(n, data)
    work = work_root / str(n)
    work.mkdir(parents=True, exist_ok=True)
    for name in INPUTS:
        shutil.copyfile(root / name, work / name)
    db = work / "sandbox.sqlite3"
    db.unlink(missing_ok=True)
    (work / "plan.json").unlink(missing_ok=True)
    options = SandboxOptions(data=str(db), seed=str(root / "seed.json"), faults=FaultOptions(latency_ms=latency_ms))
    environ = {**os.environ, SECRET_VARIABLE: "sandbox-secret"}
    load_before = os.getloadavg()[0]
    with serve_in_subprocess(options) as sandbox:
        (work / "loader.yaml").write_text(
            "environments:\n"
            "  bench:\n"
            f"    base_url: {sandbox.base_url}\n"
            f"    auth_url: {sandbox.auth_url}\n"
            "    realm: sandbox\n"
            "    expect_environment: sandbox\n"
            "    client_id: sandbox-client\n"
            f"    client_secret: {{env: {SECRET_VARIABLE}}}\n",
            encoding="utf-8",
        )
        plan = _run("plan", ["plan", "curriculum.yaml", "applicants.yaml", "--env", "bench", "--out", "plan.json"],
                    work, environ)
        apply = _run("apply", ["apply", "--plan", "plan.json", "--env", "bench", "--yes",
                               "--concurrency", str(concurrency)], work, environ)
    load = (load_before + os.getloadavg()[0]) / 2
    total = TOTAL.search(apply["output"])
    if total is None:
        raise SystemExit(f"no total line in the apply's summary:\n{apply['output'][-3000:]}")
    created, updated, _unchanged, skipped, failed = (int(n.replace(",", "")) for n in total.groups())
    return {"n": n, **_plan_counts(work / "plan.json"), "plan": plan, "apply": apply, "created": created,
            "updated": updated, "skipped": skipped, "failed": failed, "load": load,
            "plan_bytes": (work / "plan.json").stat().st_size}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[250_000])
    parser.add_argument("--concurrency", type=int, default=64, help="loader apply --concurrency (default 64)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="sandbox latency per request (default 0)")
    parser.add_argument("--data", type=Path, default=Path("/tmp/bench_plan"), help="bench_plan's workloads (read)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench_applymem"), help="where to run (written)")
    parser.add_argument("--measure", nargs=2, metavar=("CWD", "LOG"), help=argparse.SUPPRESS)
    parser.add_argument("command", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        measured(command, Path(args.measure[0]), Path(args.measure[1]))
        return 0
    print(f"sandbox in a subprocess at {args.latency_ms:g} ms latency, a fresh SQLite file per size; "
          f"`loader plan --out` then `loader apply --plan --concurrency {args.concurrency}`, each a child process")
    print("RSS = peak RSS of the command's largest process (getrusage RUSAGE_CHILDREN of a wrapper); "
          "writes = created + updated in the apply's summary; load = 1-min load average")
    print(f"{'desired':>8} {'creates':>8} {'updates':>8} {'plan MB':>8} {'plan s':>7} {'plan RSS MB':>11} "
          f"{'written':>8} {'created':>8} {'updated':>8} {'skip':>5} {'fail':>5} {'apply s':>8} "
          f"{'apply RSS MB':>12} {'load':>5}")
    for n in args.sizes:
        f = measure(n, args.data, args.work, args.concurrency, args.latency_ms)
        print(f"{f['desired']:>8} {f['create']:>8} {f['update']:>8} {f['plan_bytes'] / 2**20:>8.0f} "
              f"{f['plan']['wall_s']:>7.1f} {f['plan']['peak_kib'] / 1024:>11.0f} "
              f"{f['created'] + f['updated']:>8} {f['created']:>8} {f['updated']:>8} {f['skipped']:>5} "
              f"{f['failed']:>5} {f['apply']['wall_s']:>8.1f} {f['apply']['peak_kib'] / 1024:>12.0f} "
              f"{f['load']:>5.2f}", flush=True)
        if f["errors"]:
            print(f"         records with errors in the plan: {f['errors']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
