"""plan.json at scale, side by side for other trees (--before) and this one: its size (plain and
gzip), the time to write it and to read it, the time `loader apply --plan` takes to its first write,
and the apply's peak RSS.

    python tests/benchmarks/bench_plan_file.py [--sizes 250000] [--before /tmp/before_tree [DIR...]]
                                               [--data /tmp/bench_plan] [--work /tmp/bench_planfile]
                                               [--concurrency 64]

The workload is bench_plan's (generated under --data or reused from there). Per size, once:
`loader plan curriculum.yaml applicants.yaml --out plan.json` with this tree against a sandbox
seeded from it (a subprocess; its database kept as the pristine copy). A tree whose schema knows no
seal is given that plan.json without its seal (plan-unsealed.json: the text before it, closed).
Then, per tree (those given by --before through PYTHONPATH first, in order, then this one), each in
a child process:

- write: the plan read back, then written as plan.json (and plan.json.gz where the tree writes gzip),
  CPU and wall seconds of `write_plan_json`;
- read: `read_plan_json` of plan.json (and of plan.json.gz), CPU and wall seconds, and peak RSS;
- apply: the sandbox restarted on a fresh copy of the pristine database with its access log on;
  `loader apply --plan plan.json --env bench --yes` under a wrapper that reports the peak RSS of
  the command (getrusage RUSAGE_CHILDREN), its output in apply-<tree>.log (the row shows its
  summary's writes, skips and failures); "to 1st write" is the wall time from its start to the
  first POST/PATCH/PUT line of the sandbox's log.

The 1-min load average is printed beside each row (the machine may be shared: compare CPU times
and the two trees' rows of one run, not wall times across runs).
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
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_plan, beside this file

import bench_plan

SECRET_VARIABLE = "LOADER_BENCH_SECRET"
INPUTS = ("curriculum.xlsx", "applicants.xlsx", "curriculum.yaml", "applicants.yaml")
WRITE = re.compile(r'"(POST|PATCH|PUT) ')
TOTAL = re.compile(r"^\s*total\s+([\d,]+) created, ([\d,]+) updated, ([\d,]+) unchanged, ([\d,]+) skipped.*?, "
                   r"([\d,]+) failed", re.MULTILINE)
THIS_TREE = Path(__file__).resolve().parents[2]
SEAL_OPEN = b',\n  "seal": '  # loader.plan.plan_seal's (not imported: the wrapper runs under other trees too)

CHILD = r"""
import gc, json, os, resource, sys, time
from pathlib import Path
from loader.plan import plan_file
work, gz, name = Path(sys.argv[1]), sys.argv[2] == "gz", sys.argv[3]
figures = {}
def timed(name, call):
    cpu, wall = time.process_time(), time.perf_counter()
    value = call()
    figures[name] = [round(time.process_time() - cpu, 2), round(time.perf_counter() - wall, 2)]
    return value
plan = timed("read", lambda: plan_file.read_plan_json(work / name))
figures["read_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
timed("write", lambda: plan_file.write_plan_json(plan, work / "written.json"))
if gz:
    timed("write_gz", lambda: plan_file.write_plan_json(plan, work / "plan.json.gz"))
    del plan
    gc.collect()
    timed("read_gz", lambda: plan_file.read_plan_json(work / "plan.json.gz"))
print(json.dumps(figures))
"""


def _load() -> float:
    return os.getloadavg()[0]


@contextmanager
def sandbox(db: Path, log_writes: bool, seed: Path | None = None) -> Iterator[tuple[str, list[float]]]:
    """The sandbox on `db` in a subprocess (seeded from `seed` when it is empty); its base URL and,
    filled as they come, the times of the writes it logged (only the first is kept)."""
    command = [sys.executable, "-m", "loader.sandbox", "serve", "--port", "0", "--data", str(db),
               *(["--seed", str(seed)] if seed is not None else [])]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(THIS_TREE)}
    child = subprocess.Popen(command + (["-v"] if log_writes else []), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env=env)
    assert child.stdout is not None
    first = child.stdout.readline()
    url = re.search(r"http://\S+", first)
    if url is None:
        child.kill()
        raise SystemExit(f"the sandbox did not start: {first}")
    writes: list[float] = []

    def watch() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            if not writes and WRITE.search(line):
                writes.append(time.monotonic())

    threading.Thread(target=watch, daemon=True).start()
    try:
        yield url.group(), writes
    finally:
        child.terminate()
        child.wait(30)


def _loader_yaml(work: Path, url: str) -> None:
    (work / "loader.yaml").write_text(
        "environments:\n  bench:\n"
        f"    base_url: {url}\n    auth_url: {url}\n    realm: sandbox\n    expect_environment: sandbox\n"
        f"    client_id: sandbox-client\n    client_secret: {{env: {SECRET_VARIABLE}}}\n", encoding="utf-8")


def _environ(tree: Path) -> dict[str, str]:
    return {**os.environ, SECRET_VARIABLE: "sandbox-secret", "PYTHONPATH": str(tree)}


def prepare(n: int, data: Path, work: Path) -> tuple[Path, dict[str, Any]]:
    """The work folder with its inputs, the pristine database and plan.json made by this tree."""
    root = bench_plan.generate(n, data)
    work.mkdir(parents=True, exist_ok=True)
    for name in INPUTS:
        shutil.copyfile(root / name, work / name)
    pristine = work / "pristine.sqlite3"
    if not pristine.exists() or not (work / "plan.json").exists():  # made once, then reused
        db = _fresh(work, None)
        with sandbox(db, log_writes=False, seed=root / "seed.json") as (url, _):
            _loader_yaml(work, url)
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "loader", "plan", "curriculum.yaml", "applicants.yaml", "--env",
                            "bench", "--out", "plan.json"], cwd=work, env=_environ(THIS_TREE), check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            print(f"  seeded and planned {n:,} records in {time.perf_counter() - started:.0f} s", flush=True)
        shutil.copyfile(db, pristine)  # the plan wrote nothing: the state it was made against
    return pristine, {"plan_mib": (work / "plan.json").stat().st_size / 2**20}


def _fresh(work: Path, pristine: Path | None) -> Path:
    """The sandbox's database: a copy of `pristine`, or none yet (None: seeded when served)."""
    db = work / "sandbox.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    if pristine is not None:
        shutil.copyfile(pristine, db)
    return db


def _plan_for(tree: Path, work: Path) -> str:
    """plan.json, or for a tree whose schema knows no seal that text without its seal."""
    if '"seal"' in (tree / "schemas" / "plan.schema.json").read_text(encoding="utf-8"):
        return "plan.json"
    unsealed = work / "plan-unsealed.json"
    text = (work / "plan.json").read_bytes()
    at = text.rfind(SEAL_OPEN)
    if not unsealed.exists() or unsealed.stat().st_mtime < (work / "plan.json").stat().st_mtime:
        unsealed.write_bytes(text if at < 0 else text[:at] + b"\n}\n")
    return unsealed.name


def measure_tree(tree: Path, work: Path, pristine: Path, concurrency: int) -> dict[str, Any]:
    gz = (tree / "loader" / "files" / "gzipped.py").exists()
    name = _plan_for(tree, work)
    load = _load()
    # run in `work`: `python -c` puts the working directory first on sys.path, before PYTHONPATH's tree
    done = subprocess.run([sys.executable, "-c", CHILD, str(work), "gz" if gz else "plain", name],
                          env=_environ(tree), cwd=work, capture_output=True, text=True, check=True)
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if gz:
        figures["gz_mib"] = (work / "plan.json.gz").stat().st_size / 2**20
    with sandbox(_fresh(work, pristine), log_writes=True) as (url, writes):
        _loader_yaml(work, url)
        started = time.monotonic()
        log = work / f"apply-{tree.name}.log"
        wrapped = subprocess.run(
            [sys.executable, __file__, "--measure", str(log), "--", sys.executable, "-m", "loader", "apply", "--plan",
             name, "--env", "bench", "--yes", "--concurrency", str(concurrency)],
            cwd=work, env=_environ(tree), capture_output=True, text=True, check=True)
    applied = json.loads(wrapped.stdout.strip().splitlines()[-1])
    total = TOTAL.search(log.read_text(encoding="utf-8"))
    counted = [] if total is None else [int(n.replace(",", "")) for n in total.groups()]  # 1,204: a separator
    figures["written"] = "?" if total is None else f"{counted[0] + counted[1]}/{counted[3]}/{counted[4]}"
    figures.update(apply_rc=applied["rc"], apply_s=applied["wall_s"], apply_rss_mib=applied["peak_kib"] / 1024,
                   first_write_s=writes[0] - started if writes else None, load=(load + _load()) / 2)
    return figures


def measured(command: list[str], log: Path) -> None:
    """Wrapper process: run `command`, its output to `log`; print its peak RSS (KiB) and wall time."""
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"rc": done.returncode, "peak_kib": peak, "wall_s": time.perf_counter() - started}))


def _row(name: str, n: int, plan: dict[str, Any], f: dict[str, Any]) -> str:
    def pair(key: str) -> str:
        return f"{f[key][0]:.1f}/{f[key][1]:.1f}" if key in f else "-"

    gz = f"{f['gz_mib']:.0f}" if "gz_mib" in f else "-"
    first = f"{f['first_write_s']:.1f}" if f["first_write_s"] is not None else "-"
    return (f"{name:>12} {n:>9,} {plan['plan_mib']:>7.0f} {gz:>6} {pair('write'):>11} {pair('write_gz'):>11} "
            f"{pair('read'):>11} {pair('read_gz'):>11} {f['read_rss_mib']:>8} {first:>9} {f['apply_s']:>7.0f} "
            f"{f['apply_rss_mib']:>9.0f} {f['apply_rc']:>3} {f['written']:>18} {f['load']:>5.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[250_000])
    parser.add_argument("--before", type=Path, nargs="+", default=[Path("/tmp/before_tree")],
                        help="the trees to compare with")
    parser.add_argument("--concurrency", type=int, default=64, help="loader apply --concurrency (default 64)")
    parser.add_argument("--only", choices=("before", "after"), help="measure the trees before, or this one, only")
    parser.add_argument("--data", type=Path, default=Path("/tmp/bench_plan"), help="bench_plan's workloads (read)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench_planfile"), help="where to run (written)")
    parser.add_argument("--measure", metavar="LOG", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("command", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measured(args.command[1:] if args.command[:1] == ["--"] else args.command, args.measure)
        return 0
    print("MiB: plan.json and plan.json.gz; write, read: CPU/wall seconds of write_plan_json and read_plan_json "
          "(plain, gzip); read RSS: peak MiB of the reading process; to 1st write: wall seconds from "
          "`loader apply --plan` starting to the sandbox logging its first write; apply s, RSS: the whole "
          "apply's wall seconds and peak MiB; rc: its exit code; load: 1-min load average")
    print(f"{'tree':>12} {'records':>9} {'MiB':>7} {'gz MiB':>6} {'write':>11} {'write gz':>11} {'read':>11} "
          f"{'read gz':>11} {'read RSS':>8} {'1st write':>9} {'apply s':>7} {'apply RSS':>9} {'rc':>3} "
          f"{'written/skip/fail':>18} {'load':>5}")
    for n in args.sizes:
        work = args.work / str(n)
        pristine, plan = prepare(n, args.data, work)
        for side, tree in [*(("before", tree) for tree in args.before), ("after", THIS_TREE)]:
            if args.only not in (None, side):
                continue
            name = tree.name if side == "before" else "after"
            print(_row(name[:12], n, plan, measure_tree(tree, work, pristine, args.concurrency)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
