"""What the history adds to an apply: journaling every write as its answer arrives, then finishing
(the journal folded into the snapshot, the snapshot and head written), at 250,000 records, for the
loader of this tree and for another tree (the code before a change), side by side in one run.

The writes themselves are not sent: each record's answer is made up, so the figures are the
history's own cost (CPU seconds added to an apply, bytes per record, peak memory), not the
service's. Records are schools with six fields (code, name, two labels, type, parent). Two applies
are journaled one after the other into one history: the first creates every record (an empty
history), the second updates the name of `--touch` of them (a history of every record). Each tree
runs in a child process of its own (its peak memory is its own), `--rounds` times, the trees
taking turns; the machine's load average is printed beside every figure. The history's share of
a real apply's wall time is `bench_apply_history_share.py`'s: the same apply with the history on
and off, side by side.

    python tests/benchmarks/bench_apply_history.py [--records 250000] [--touch 0.1] [--personal]
        [--before /tmp/before_tree] [--rounds 1]

`--before DIR` is a tree of the loader to compare with (its `loader/` package is imported from
DIR); without it only this tree runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
USER = "6d0c713c-4272-5942-ba1c-ab2e52d9f6b8"


def _plan(n: int, touch: float | None) -> tuple[Any, list[dict[str, Any]]]:
    """The creates of `n` schools, or (with `touch`) updates of the name of that share of them."""
    from helpers.apply import created_changes, make_plan, record

    from loader.plan.model import Action, FieldChange

    records, payloads = [], []
    step = 1 if touch is None else max(1, round(1 / touch))
    for i in range(0, n, step):
        code = f"S{i:07d}"
        if touch is not None:
            payload: dict[str, Any] = {"name": f"School of things {i}, renamed"}
            changes: tuple[FieldChange, ...] = (FieldChange("name", f"School of things {i}", payload["name"]),)
            records.append(record("schools", "school", code, payload, row=i + 2, changes=changes,
                                  action=Action.UPDATE, live_id=_id(i)))
            payloads.append(payload)
            continue
        payload = {"code": code, "name": f"School of things {i}", "type": "SCHOOL",
                   "parent": {"id": f"00000000-0000-4000-8000-{i % 1000:012d}"},
                   "custom_attributes": {"Faculty": f"Faculty {i % 40}", "Campus": "North"}}
        records.append(record("schools", "school", code, payload, row=i + 2, changes=created_changes(payload)))
        payloads.append(payload)
    return make_plan(("schools", "school", records)), payloads


def _id(i: int) -> str:
    return f"10000000-0000-4000-8000-{i:012d}"


def _apply(history: Any, plan: Any, payloads: list[dict[str, Any]], kind: str, clock: int) -> dict[str, float]:
    """One apply's journaling and finishing: CPU and wall seconds."""
    from helpers.apply import PROFILE

    from loader.apply.journaling import ApplyJournal

    started, wall = time.process_time(), time.perf_counter()
    writer = history.begin_apply("sandbox", plan_digest="sha256:bench", by="bench")
    journal = ApplyJournal(writer, plan, PROFILE)
    for planned, payload in zip(plan.records(), payloads, strict=True):
        number = int(planned.key[0][1:])
        answer = {"id": _id(number), "metadata": {"updated": {"time": clock + number, "user": {"id": USER}}}}
        journal.written(planned, _id(number), payload, answer, kind=kind)
    journaled = time.process_time() - started
    history.finish_apply(writer, {kind: len(payloads)})
    return {"writes": len(payloads), "journal_cpu": journaled, "finish_cpu": time.process_time() - started - journaled,
            "wall": time.perf_counter() - wall}


def _child(records: int, touch: float, personal: bool) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests"))  # the helpers, as pytest's pythonpath
    import loader
    from loader.history.store import History

    figures: dict[str, Any] = {"loader": str(Path(loader.__file__).parents[1])}
    creates, create_payloads = _plan(records, None)
    updates, update_payloads = _plan(records, touch)
    figures["plan_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with tempfile.TemporaryDirectory() as folder:
        key = b"bench key" if personal else None
        history = History.open(Path(folder), history_key=key, personal=("school",) if personal else ())
        figures["load_before"] = os.getloadavg()[0]
        figures["create"] = _apply(history, creates, create_payloads, "create", 1_800_000_000_000)
        sizes = {p.relative_to(folder): p.stat().st_size for p in Path(folder).rglob("*") if p.is_file()}
        figures["snapshot_bytes"] = sum(s for p, s in sizes.items() if p.parts[0] == "snapshot")
        figures["largest_file"] = max(s for p, s in sizes.items() if p.parts[0] == "snapshot")
        figures["journal_bytes"] = sum(s for p, s in sizes.items() if p.parts[0] == "journal")
        figures["update"] = _apply(history, updates, update_payloads, "update", 1_900_000_000_000)
        figures["load_after"] = os.getloadavg()[0]
    figures["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return figures


def _run(tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", "--records", str(args.records), "--touch", str(args.touch)]
    if args.personal:
        command.append("--personal")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode:
        raise SystemExit(f"the run with the loader of {tree} failed:\n{done.stderr}")
    figures: dict[str, Any] = json.loads(done.stdout)
    if Path(figures["loader"]).resolve() != tree.resolve():
        raise SystemExit(f"the run meant for {tree} imported the loader of {figures['loader']}")
    return figures


def _print(name: str, f: dict[str, Any], records: int) -> None:
    create, update = f["create"], f["update"]
    n = create["writes"]
    print(f"{name:7} load {f['load_before']:.2f}-{f['load_after']:.2f}")
    for label, apply in (("create", create), ("update", update)):
        writes = apply["writes"]
        journal, finish = apply["journal_cpu"], apply["finish_cpu"]
        print(f"  {label} {writes:,}: journaling {journal:.2f} s CPU ({journal / writes * 1e6:.1f} us a write), "
              f"finishing {finish:.2f} s CPU; in all {journal + finish:.2f} s CPU, {apply['wall']:.2f} s wall")
    print(f"  snapshot {f['snapshot_bytes'] / n:.0f} bytes a record ({f['snapshot_bytes'] / 1e6:.1f} MB, largest file "
          f"{f['largest_file'] / 1e6:.1f} MB); journal {f['journal_bytes'] / n:.0f} bytes a record")
    print(f"  peak memory {f['peak_mb']:.0f} MB ({f['plan_mb']:.0f} MB once the two plans were built)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=250_000)
    parser.add_argument("--touch", type=float, default=0.1, help="the share of records the second apply updates")
    parser.add_argument("--personal", action="store_true", help="keyed digests (school taken as personal)")
    parser.add_argument("--before", type=Path, help="a tree of the loader to compare with")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.records, args.touch, args.personal)))
        return
    trees = ([("before", args.before)] if args.before else []) + [("after", ROOT)]
    print(f"{args.records:,} records, {'keyed' if args.personal else 'plain'} digests; the second apply updates "
          f"{args.touch:.0%} of them")
    best: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, tree in trees:
            figures = _run(tree, args)
            _print(name, figures, args.records)
            cost = figures["create"]["journal_cpu"] + figures["create"]["finish_cpu"]
            best[name] = min(best.get(name, cost), cost)
    for name, cost in best.items():
        print(f"{name}: the history's cost to the create apply {cost:.1f} s CPU (its share of an apply's wall "
              "time: bench_apply_history_share.py)")


if __name__ == "__main__":
    main()
