"""The journal of a first load through the sandbox: bytes a record, its files and the largest.

    python tests/benchmarks/bench_journal_size.py [--records 10000] [--data /tmp/bench_journal] [TREE...]

The workload is bench_plan's curriculum (schools, courses, programs, subjects: code, name, parent,
one label), sized to about `--records` records, loaded with `loader apply curriculum.yaml` into an
empty sandbox (every record a create), by each TREE given (through PYTHONPATH; this tree when none),
in turn, each on a fresh database and history. Prints per tree the journal's bytes a record, how
many files it is and the largest one's size.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_plan, bench_plan_file: beside this file

import bench_plan
import bench_plan_file as planfile

CURRICULUM_SHARE = sum(bench_plan.SHARES[e] for e in bench_plan.CURRICULUM)


def measure(tree: Path, source: Path, work: Path) -> str:
    """One first load of `source`'s curriculum by `tree`: its row."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for name in ("curriculum.xlsx", "curriculum.yaml"):
        shutil.copyfile(source / name, work / name)
    with planfile.sandbox(work / "sandbox.sqlite3", log_writes=False) as (url, _):
        planfile._loader_yaml(work, url)
        subprocess.run([sys.executable, "-m", "loader", "apply", "curriculum.yaml", "--env", "bench", "--yes",
                        "--concurrency", "16"], cwd=work, env=planfile._environ(tree), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journals = sorted((work / "history" / "bench" / "journal").glob("*.jsonl"))
    sizes = [p.stat().st_size for p in journals]
    records = sum(1 for p in journals for line in p.read_bytes().splitlines() if b'"kind":' in line)
    return (f"{tree}: {records:,} records, journal {sum(sizes) / records:.0f} bytes a record "
            f"({sum(sizes) / 1e6:.2f} MB in {len(sizes)} file(s), largest {max(sizes) / 1e6:.2f} MB)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", type=Path, nargs="*", help="source trees (default: this one)")
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--data", type=Path, default=Path("/tmp/bench_journal"))
    args = parser.parse_args()
    source = bench_plan.generate(round(args.records / CURRICULUM_SHARE), args.data)
    for at, tree in enumerate(args.trees or [planfile.THIS_TREE]):
        print(measure(tree.resolve(), source, args.data / f"work-{at}"), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
