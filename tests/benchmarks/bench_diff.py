"""The diff alone: CPU time per desired record of `plan_changes` at 100,000 and 250,000 records.

    python tests/benchmarks/bench_diff.py [--sizes 100000 250000] [--out /tmp/bench_plan] [--profile FILE]

The inputs are bench_plan's (the same workbooks, mappings and live state: 70% of the records live,
a tenth of those with another name), read once with the real reader and cached beside them as a
pickle, so only the diff is measured. The diff is pure, so its process CPU time is the figure that
survives a shared machine; it runs in a fresh child process per size (as in `loader plan`, under
`gc.freeze()`, the collector off), and the machine's load average is printed beside each figure. Target: <= 20 µs a
record at 250,000.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_plan


def _inputs(root: Path) -> tuple[Any, dict[str, list[dict[str, Any]]]]:
    """(blocks, live) for the size in `root`; the blocks read once and cached."""
    from loader.config import load_config
    from loader.source.sources import read_sources

    cache = root / "blocks.pickle"
    if cache.exists():
        blocks = pickle.loads(cache.read_bytes())
    else:
        os.chdir(root)
        sources = read_sources([Path("curriculum.yaml"), Path("applicants.yaml")], load_config(None).profile)
        blocks = list(sources.blocks)
        cache.write_bytes(pickle.dumps(blocks, protocol=pickle.HIGHEST_PROTOCOL))
    seed = json.loads((root / "seed.json").read_text(encoding="utf-8"))["institution-a"]
    singular = {"schools": "school", "courses": "course", "programs": "program", "subjects": "subject",
                "applicants": "applicant"}
    live: dict[str, list[dict[str, Any]]] = {"credential": [], "tag": []}
    for collection, records in seed.items():
        live[singular[collection]] = [{**r, "metadata": {"updated": {"time": 1_700_000_000_000 + i}}}
                                      for i, r in enumerate(records)]
    return blocks, live


def child(root: Path, profile_to: str | None) -> None:
    from loader.config import load_config
    from loader.plan.diff import PlanHeader, plan_changes

    blocks, live = _inputs(root)
    profile = load_config(None).profile
    header = PlanHeader(environment="sandbox")
    desired = sum(len(b.records) for b in blocks)
    gc.collect()
    gc.freeze()  # as loader.plan.run does around the diff
    if os.environ.get("BENCH_DIFF_COLLECTOR") != "on":  # "on": as before issue 12, for a baseline run
        gc.disable()
    profiler = None
    if profile_to:
        import cProfile

        profiler = cProfile.Profile(time.process_time)  # CPU, not wall time
        profiler.enable()
    load = os.getloadavg()[0]
    cpu, wall = time.process_time(), time.perf_counter()
    plan = plan_changes(blocks, live, profile, header=header)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if profiler:
        profiler.disable()
        assert profile_to is not None  # the profiler exists only when profile_to was given
        profiler.dump_stats(profile_to)
    records = plan.records()
    print(json.dumps({
        "desired": desired, "planned": len(records), "cpu_s": cpu, "wall_s": wall, "load": load,
        "create": sum(r.action.value == "create" for r in records),
        "update": sum(r.action.value == "update" for r in records),
        "errors": sum(bool(r.errors) for r in records),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 250_000])
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench_plan"))
    parser.add_argument("--profile", help="write cProfile stats of the last size's diff here")
    parser.add_argument("--child", metavar="ROOT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child), args.profile)
        return 0
    print(f"{'desired':>8} {'create':>7} {'update':>7} {'errors':>6} {'diff CPU s':>10} {'µs/record':>9} "
          f"{'wall s':>7} {'RSS MB':>7}  load (1 min)")
    for n in args.sizes:
        root = bench_plan.generate(n, args.out)
        command = [sys.executable, __file__, "--child", str(root)]
        if args.profile and n == args.sizes[-1]:
            command += ["--profile", args.profile]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        f = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{f['desired']:>8} {f['create']:>7} {f['update']:>7} {f['errors']:>6} {f['cpu_s']:>10.2f} "
              f"{1e6 * f['cpu_s'] / f['desired']:>9.1f} {f['wall_s']:>7.2f} {f['peak_rss_mb']:>7.0f}  "
              f"{f['load']:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
