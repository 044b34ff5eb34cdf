"""The history's share of an apply's wall time, measured: the same apply with the history on and off.

`--records` creates of schools (six fields each: code, name, description, parent and two labels),
written by the executor (`apply_plan` through ApiClient) at `--concurrency` against a sandbox
with no latency, where the apply is bound by the machine's CPU. With the history on, the apply
runs as `loader apply` runs it with a history (an empty one: the first cycle): every write is
journaled as its answer arrives and the journal is folded into the snapshot at the end; with it
off, nothing is journaled. Each apply runs in a child process of its own against a fresh sandbox
(seeded with the records' parents), the sides taking turns `--rounds` times; `--before DIR` adds
the loader of another tree, on and off, in the same rounds. Printed per apply: its wall time, the
client process's CPU time and the load average; then per tree the medians, and the history's
share of the apply's wall time, from the same runs:

    wall share = (median wall on - median wall off) / median wall on
    CPU share  = (median CPU on - median CPU off) / median wall on

(the first is the figure a user sees, but moves with the machine's other work; the second is the
history's CPU over the same apply's real wall time, steadier on a shared machine).

    python tests/benchmarks/bench_apply_history_share.py [--records 250000] [--concurrency 64]
                                                         [--rounds 3] [--before /tmp/before_tree]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PARENTS = 1000


def _parent_id(i: int) -> str:
    return f"00000000-0000-4000-8000-{i:012d}"


def _seed() -> dict[str, Any]:
    schools = [{"id": _parent_id(i), "code": f"P{i}", "name": f"Parent {i}"} for i in range(PARENTS)]
    return {"institution-a": {"schools": schools}}


def _plan(n: int) -> Any:
    from helpers.apply import created_changes, make_plan, record


    records = []
    for i in range(n):
        code = f"S{i:07d}"
        payload = {"code": code, "name": f"School of things {i}", "description": f"The school of things {i}",
                   "parent": {"id": _parent_id(i % PARENTS)},
                   "custom_attributes": {"Faculty": f"Faculty {i % 40}", "Campus": "North"}}
        records.append(record("schools", "school", code, payload, row=i + 2, changes=created_changes(payload)))
    return make_plan(("schools", "school", records))


def _child(base_url: str, n: int, concurrency: int, history_on: bool) -> dict[str, Any]:
    """One apply in this process (the loader on PYTHONPATH): its wall and CPU seconds."""
    sys.path.insert(0, str(ROOT / "tests"))  # the helpers, as pytest's pythonpath
    from helpers.apply import PROFILE, client_for

    import loader
    from loader.apply.executor import ApplyOptions, apply_plan
    from loader.history.store import History
    from loader.sandbox.server import RunningSandbox

    plan = _plan(n)

    async def run(history: Any) -> tuple[float, float, int]:
        async with client_for(RunningSandbox(base_url=base_url), concurrency=concurrency) as client:
            wall, cpu = time.perf_counter(), time.process_time()
            results = await apply_plan(plan, client, PROFILE, ApplyOptions(concurrency=concurrency),
                                       history=history, journal_by="bench")
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        return wall, cpu, sum(1 for r in results.records if str(r.outcome) == "created")

    with tempfile.TemporaryDirectory() as folder:
        history = History.open(Path(folder)) if history_on else None
        wall, cpu, created = asyncio.run(run(history))
    return {"loader": str(Path(loader.__file__).parents[1]), "wall": wall, "cpu": cpu, "created": created}


def _apply(tree: Path, n: int, concurrency: int, history_on: bool) -> dict[str, Any]:
    """One apply by the loader of `tree` in a child process, against a fresh sandbox."""
    sys.path.insert(0, str(ROOT))
    from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_subprocess

    with serve_in_subprocess(SandboxOptions(seed=_seed(), faults=FaultOptions(latency_ms=0))) as sandbox:
        load = os.getloadavg()[0]
        command = [sys.executable, __file__, "--child", sandbox.base_url, str(n), str(concurrency),
                   "on" if history_on else "off"]
        done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tree)},
                              check=False)
    if done.returncode:
        raise SystemExit(f"the apply of the loader of {tree} failed:\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if Path(figures["loader"]).resolve() != tree.resolve():
        raise SystemExit(f"the run meant for {tree} imported the loader of {figures['loader']}")
    if figures["created"] != n:
        raise SystemExit(f"the apply of the loader of {tree} created {figures['created']} of {n} records")
    figures["load"] = (load + os.getloadavg()[0]) / 2
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=250_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3, help="turns of every side (default 3)")
    parser.add_argument("--before", type=Path, help="a tree of the loader to compare with")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        base_url, n, concurrency, history = args.child
        print(json.dumps(_child(base_url, int(n), int(concurrency), history == "on")))
        return 0
    trees = ([("before", args.before)] if args.before else []) + [("this tree", ROOT)]
    print(f"{args.records:,} creates at concurrency {args.concurrency}, no latency; {args.rounds} rounds; "
          f"load {os.getloadavg()[0]:.2f}")
    runs: dict[tuple[str, bool], list[dict[str, Any]]] = {}
    for round_ in range(args.rounds):
        for name, tree in trees:
            sides = (True, False) if round_ % 2 == 0 else (False, True)  # neither side always first
            for history_on in sides:
                figures = _apply(tree, args.records, args.concurrency, history_on)
                runs.setdefault((name, history_on), []).append(figures)
                print(f"  {name:9} history {'on ' if history_on else 'off'}  wall {figures['wall']:7.1f} s  "
                      f"CPU {figures['cpu']:7.1f} s  load {figures['load']:.2f}", flush=True)
    print("medians:")
    for name, _ in trees:
        on, off = runs[(name, True)], runs[(name, False)]
        wall_on, wall_off = statistics.median(r["wall"] for r in on), statistics.median(r["wall"] for r in off)
        cpu_on, cpu_off = statistics.median(r["cpu"] for r in on), statistics.median(r["cpu"] for r in off)
        loads = [r["load"] for r in on + off]
        print(f"  {name}: history on {wall_on:.1f} s wall, {cpu_on:.1f} s CPU; off {wall_off:.1f} s wall, "
              f"{cpu_off:.1f} s CPU (load {min(loads):.1f}-{max(loads):.1f})")
        print(f"    the history's share of the apply's wall time: {(wall_on - wall_off) / wall_on:+.1%} (wall), "
              f"{(cpu_on - cpu_off) / wall_on:.1%} (CPU: {cpu_on - cpu_off:.1f} s, "
              f"{(cpu_on - cpu_off) / args.records * 1e6:.1f} us a write)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
