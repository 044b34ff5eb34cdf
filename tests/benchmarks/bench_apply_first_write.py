"""`loader apply --plan` at scale, bounded: the time from its start to the sandbox's first write,
and the apply's peak RSS over a fixed window after it, for each tree given, taking turns.

    python tests/benchmarks/bench_apply_first_write.py --work DIR [--window 60] [--repeat 2] TREE [TREE...]

DIR holds what bench_plan_file.py leaves in its work folder for one size (`plan.json`,
`pristine.sqlite3` and the inputs): run that once first. Each run starts the sandbox on a fresh
copy of the pristine database (everything but those files is removed from DIR first, so no history
or results of an earlier run remain), runs `loader apply --plan plan.json --concurrency 64` with the
tree on PYTHONPATH, and stops it `--window` seconds after its first write (the whole apply of a
large plan takes far longer on a shared machine). The 1-min load average is printed beside each row.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_plan_file, beside this file

import bench_plan_file as planfile


def measure(tree: Path, work: Path, window: float) -> str:
    """One bounded apply of `work`'s plan.json by `tree`: its row."""
    keep = {"plan.json", "pristine.sqlite3", *planfile.INPUTS}
    for item in work.iterdir():
        if item.name not in keep:
            shutil.rmtree(item) if item.is_dir() else item.unlink()
    db = planfile._fresh(work, work / "pristine.sqlite3")
    load = planfile._load()
    with planfile.sandbox(db, log_writes=True) as (url, writes):
        planfile._loader_yaml(work, url)
        started = time.monotonic()
        command = [sys.executable, "-m", "loader", "apply", "--plan", "plan.json", "--env", "bench", "--yes",
                   "--concurrency", "64"]
        child = subprocess.Popen(command, cwd=work, env=planfile._environ(tree),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not writes and child.poll() is None:
            time.sleep(0.05)
        first = writes[0] - started if writes else float("nan")
        try:
            child.wait(window)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the apply: the only child waited for
    return (f"{tree.name:>14}: first write after {first:5.1f} s; peak RSS over {window:.0f} s after it {peak:5.0f} MiB;"
            f" load {load:.1f}-{planfile._load():.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", type=Path, nargs="+", help="source trees, measured in turns")
    parser.add_argument("--work", type=Path, required=True, help="bench_plan_file's work folder for one size")
    parser.add_argument("--window", type=float, default=60.0, help="seconds of writing after the first write")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    for _ in range(args.repeat):
        for tree in args.trees:
            print(measure(tree.resolve(), args.work, args.window), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
