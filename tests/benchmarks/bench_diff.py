"""The diff alone: CPU time per desired record of `plan_changes` at 100,000 and 250,000 records.

    python tests/benchmarks/bench_diff.py [--sizes 100000 250000] [--out /tmp/bench_plan] [--profile FILE]
                                          [--history [--baseline DIR] [--runs N]]

The inputs are bench_plan's (the same workbooks, mappings and live state: 70% of the records live,
a tenth of those with another name), read once with the real reader and cached beside them as a
pickle, so only the diff is measured. The diff is pure, so its process CPU time is the figure that
survives a shared machine; it runs in a fresh child process per size (as in `loader plan`, under
`gc.freeze()`, the collector off), and the machine's load average is printed beside each figure. Target: <= 20 µs a
record at 250,000.

`--history` plans three-way, against the history and the edited sandbox database an earlier
`bench_plan.py --history` run of that size left under OUT/<n>: the live records are fetched from a
sandbox over that database once (cached beside it), so the plan is the one `bench_plan.py`'s planner
makes, all its parts at once. `--baseline DIR` plans with another source tree too (made as
`bench_plan.py --baseline` says), alternating the two trees `--runs` times; the rows print the
plan's digest, which must be the same.
"""

from __future__ import annotations

import argparse
import gc
import inspect
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
    import hashlib

    import loader
    from loader.config import load_config
    from loader.source.sources import read_sources

    tree = hashlib.sha256(str(Path(loader.__file__).resolve().parent).encode()).hexdigest()[:8]
    cache = root / f"blocks-{tree}.pickle"  # one per source tree: their classes differ
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


def _fetched_live(root: Path) -> dict[str, list[dict[str, Any]]]:
    """The live records of the edited database a `bench_plan.py --history` run left in `root`, as a
    plan's fetch keeps them, fetched from a sandbox over a copy of it once and cached beside it."""
    cache = root / "live-edited.pickle"
    if cache.exists():
        return pickle.loads(cache.read_bytes())
    import asyncio

    from loader.api.client import ApiClient
    from loader.config import load_config
    from loader.live_records import LiveSlimmer
    from loader.sandbox.server import SandboxOptions, serve_in_subprocess

    database = root / "diff.sqlite3"
    bench_plan._copy_database(root / "edited.sqlite3", database)
    config = load_config(None)
    with serve_in_subprocess(SandboxOptions(data=str(database), seed=str(root / "seed.json"))) as sandbox:
        async def fetch() -> dict[str, list[dict[str, Any]]]:
            async with ApiClient(bench_plan._environment(sandbox.base_url), config.profile) as client:
                return await client.fetch_collections(sorted(bench_plan.SHARES))
        live = asyncio.run(fetch())
    bench_plan._copy_database(None, database)
    live = {entity: [LiveSlimmer().slim(r) for r in records] for entity, records in live.items()}
    cache.write_bytes(pickle.dumps(live, protocol=pickle.HIGHEST_PROTOCOL))
    return live


def _history(root: Path) -> Any:
    from loader.config import load_config
    from loader.history.personal import personal_entities
    from loader.source.sources import load_mappings

    os.chdir(root)
    profile = load_config(None).profile
    mappings = load_mappings([Path(m) for m in bench_plan.MAPPINGS], profile)
    if len(inspect.signature(personal_entities).parameters) == 1:  # a tree before the profile named them
        return bench_plan._opener(root)(personal_entities(mappings))  # type: ignore[call-arg]
    return bench_plan._opener(root)(personal_entities(mappings, profile))


def child(root: Path, profile_to: str | None, history: bool = False) -> None:
    from loader.config import load_config
    from loader.plan.diff import PlanHeader, plan_changes
    from loader.plan.digest import plan_digest

    blocks, live = _inputs(root)
    opened = None
    if history:
        live, opened = _fetched_live(root), _history(root)
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
    plan = plan_changes(blocks, live, profile, header=header, history=opened)
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
        "three_way": sum(r.history_line not in (None, "none") for r in records),
        "digest": plan_digest(plan)[:23],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 250_000])
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench_plan"))
    parser.add_argument("--profile", help="write cProfile stats of the last size's diff here")
    parser.add_argument("--history", action="store_true", help="plan three-way (see above)")
    parser.add_argument("--baseline", type=Path, help="a source tree planned too, alternating with this one")
    parser.add_argument("--runs", type=int, default=1, help="with --baseline: how many times each tree plans")
    parser.add_argument("--child", metavar="ROOT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child), args.profile, args.history)
        return 0
    print(f"{'tree':>9} {'desired':>8} {'create':>7} {'update':>7} {'3-way':>7} {'errors':>6} {'diff CPU s':>10} "
          f"{'µs/record':>9} {'wall s':>7} {'RSS MB':>7}  {'load':>5}  digest")
    trees = [("this tree", dict(os.environ))]
    if args.baseline:
        trees.insert(0, ("baseline", {**os.environ, "PYTHONPATH": str(args.baseline)}))
    for n in args.sizes:
        root = bench_plan.generate(n, args.out)
        command = [sys.executable, __file__, "--child", str(root), *(["--history"] if args.history else [])]
        if args.profile and n == args.sizes[-1]:
            command += ["--profile", args.profile]
        for _ in range(args.runs if args.baseline else 1):
            for label, environ in trees:
                done = subprocess.run(command, capture_output=True, text=True, check=True, env=environ)
                f = json.loads(done.stdout.strip().splitlines()[-1])
                print(f"{label:>9} {f['desired']:>8} {f['create']:>7} {f['update']:>7} {f['three_way']:>7} "
                      f"{f['errors']:>6} {f['cpu_s']:>10.2f} {1e6 * f['cpu_s'] / f['desired']:>9.1f} "
                      f"{f['wall_s']:>7.2f} {f['peak_rss_mb']:>7.0f}  {f['load']:>5.2f}  {f['digest']}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
