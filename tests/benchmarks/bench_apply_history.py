"""What the history adds to an apply: journaling every write as its answer arrives, then finishing
(the journal folded into the snapshot, the snapshot and head written), at 250,000 records.

The writes themselves are not sent: each record's answer is made up, so the figures are the
history's own cost (CPU seconds added to an apply, bytes per record, peak memory), not the
service's. Records are schools with six fields (code, name, two labels, type, parent).

    python tests/benchmarks/bench_apply_history.py [--records 250000] [--personal]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, as pytest's pythonpath

from helpers.apply import PROFILE, make_plan, record

from loader.apply.journaling import ApplyJournal
from loader.history.store import History
from loader.plan.model import FieldChange, Plan

USER = "6d0c713c-4272-5942-ba1c-ab2e52d9f6b8"


def _plan(n: int) -> tuple[Plan, list[dict[str, Any]]]:
    records, payloads = [], []
    for i in range(n):
        code = f"S{i:07d}"
        payload: dict[str, Any] = {"code": code, "name": f"School of things {i}", "type": "SCHOOL",
                   "parent": {"id": f"00000000-0000-4000-8000-{i % 1000:012d}"},
                   "custom_attributes": {"Faculty": f"Faculty {i % 40}", "Campus": "North"}}
        changes = tuple(FieldChange(name, None, value) for name, value in payload.items()
                        if name != "custom_attributes")
        changes += (FieldChange("custom_attributes.Faculty", None, f"Faculty {i % 40}"),
                    FieldChange("custom_attributes.Campus", None, "North"))
        records.append(record("schools", "school", code, payload, row=i + 2, changes=changes))
        payloads.append(payload)
    return make_plan(("schools", "school", records)), payloads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=250_000)
    parser.add_argument("--personal", action="store_true", help="keyed digests (school taken as personal)")
    args = parser.parse_args()
    plan, payloads = _plan(args.records)
    plan_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with tempfile.TemporaryDirectory() as folder:
        key = b"bench key" if args.personal else None
        history = History.open(Path(folder), history_key=key, personal=("school",) if args.personal else ())
        started = time.process_time()
        wall = time.perf_counter()
        writer = history.begin_apply("sandbox", plan_digest="sha256:bench", by="bench")
        journal = ApplyJournal(writer, plan, PROFILE)
        for i, (planned, payload) in enumerate(zip(plan.records(), payloads, strict=True)):
            answer = {"id": f"10000000-0000-4000-8000-{i:012d}", "metadata": {"updated": {"time": 1_800_000_000_000 + i,
                      "user": {"id": USER}}}}
            journal.written(planned, str(answer["id"]), payload, answer, kind="create")
        journaled = time.process_time() - started
        history.finish_apply(writer, {"created": args.records})
        total = time.process_time() - started
        wall = time.perf_counter() - wall
        sizes = {p.relative_to(folder): p.stat().st_size for p in Path(folder).rglob("*") if p.is_file()}
    snapshot = sum(size for path, size in sizes.items() if path.parts[0] == "snapshot")
    journal_bytes = sum(size for path, size in sizes.items() if path.parts[0] == "journal")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n = args.records
    print(f"{n} records, {'keyed' if args.personal else 'plain'} digests")
    print(f"  journaling: {journaled:.2f} s CPU ({journaled / n * 1e6:.1f} us a write)")
    print(f"  finishing (fold, snapshot, head): {total - journaled:.2f} s CPU")
    print(f"  added to the apply: {total:.2f} s CPU, {wall:.2f} s wall")
    print(f"  snapshot {snapshot / n:.0f} bytes a record ({snapshot / 1e6:.1f} MB, largest file "
          f"{max(s for p, s in sizes.items() if p.parts[0] == 'snapshot') / 1e6:.1f} MB); "
          f"journal {journal_bytes / n:.0f} bytes a record")
    print(f"  peak memory of the process: {peak_mb:.0f} MB ({plan_mb:.0f} MB once the plan was built)")


if __name__ == "__main__":
    main()
