"""Reading the plan benchmark's sheets end to end: workbook -> checked desired records, in rows/s.

    python tests/benchmarks/bench_read.py [--sizes 100000 250000] [--runs 3] [--out /tmp/bench_plan]
                                          [--baseline DIR]

The inputs are bench_plan.py's (two workbooks, six blocks: plain text, references, custom
attributes, a list, PII fields). Each run is a fresh child process that times `read_sources` as
the planner's reading child runs it (the collector paused) and prints wall and CPU time, records and
peak RSS; the rows/s figure is records / wall time, the median of `--runs`. `--baseline DIR` (a source
tree: `git archive <commit> | tar -x -C DIR`, with `ln -s DIR/schemas DIR/loader/schemas`) runs
first in each round, so both rows share the machine's state; the load average is printed beside.
Target: >= 50,000 rows/s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_plan


def child(root: Path) -> None:
    """Read the sources here and print the figures as JSON (run by the parent, once per run)."""
    import gc
    import resource
    import time

    os.chdir(root)
    from loader.config import load_config
    from loader.source.sources import read_sources

    profile = load_config(None).profile
    gc.disable()  # as the reading child process of a plan runs it (loader.plan.incremental.reading)
    started, cpu = time.perf_counter(), time.process_time()
    sources = read_sources([Path("curriculum.yaml"), Path("applicants.yaml")], profile)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(json.dumps({
        "records": sum(len(b.records) for b in sources.blocks),
        "errors": sum(len(b.errors) for b in sources.blocks),
        "wall_s": wall, "cpu_s": cpu,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


def run_once(root: Path, tree: Path | None) -> dict[str, Any]:
    environ = {**os.environ, "PYTHONPATH": str(tree)} if tree else dict(os.environ)
    done = subprocess.run([sys.executable, __file__, "--child", str(root)], capture_output=True, text=True,
                          check=True, env=environ)
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description="reading benchmark")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 250_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench_plan"))
    parser.add_argument("--baseline", type=Path, help="a source tree (`git archive`) run first in each round")
    parser.add_argument("--child", metavar="ROOT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child))
        return 0
    trees: list[tuple[str, Path | None]] = [("baseline", args.baseline)] if args.baseline else []
    trees.append(("this tree", None))
    print("read_sources in a fresh process per run (collector paused, as in a plan's reading child); "
          f"median of {args.runs} runs; rows/s = records / wall")
    print(f"{'tree':>9} {'records':>8} {'wall s':>7} {'CPU s':>6} {'rows/s':>8} {'µs/row':>7} {'RSS MB':>6} "
          f"{'load':>5}")
    for n in args.sizes:
        root = bench_plan.generate(n, args.out)
        seen: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in trees}
        loads = []
        for _ in range(args.runs):
            for label, tree in trees:
                seen[label].append(run_once(root, tree))
            loads.append(os.getloadavg()[0])
        for label, _ in trees:
            runs = seen[label]
            wall = statistics.median(r["wall_s"] for r in runs)
            cpu = statistics.median(r["cpu_s"] for r in runs)
            records = runs[0]["records"]
            rss = max(r["peak_rss_mb"] for r in runs)
            print(f"{label:>9} {records:>8} {wall:>7.2f} {cpu:>6.2f} {records / wall:>8,.0f} "
                  f"{wall / records * 1e6:>7.1f} {rss:>6.0f} {statistics.mean(loads):>5.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
