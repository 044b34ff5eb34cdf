"""The values conflicts show as last loaded, read from a large journal: as `History.last_values`
reads them (each line tested as text, only the asked records' lines parsed) against every journal
read whole (`History.journals`), CPU of each, alternating `--runs` times, and whether they agree.

    python tests/benchmarks/bench_last_values.py [--entries 150000] [--asked 880] [--runs 2]

The journal is one apply's, written by the history's own writer: `--entries` updates of three
fields each (a value after each, as apply journals them), under a fresh folder in /tmp.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, as pytest's pythonpath

from helpers.journals import newest_values_read_whole

from loader.history.journal import FieldWrite
from loader.history.lines import Owner
from loader.history.store import History

OWNER = Owner("curriculum.yaml", "subjects")


def _journal(folder: Path, entries: int) -> History:
    history = History.open(folder)
    writer = history.begin_apply("bench", plan_digest="sha256:1", by="bench")
    for n in range(entries):
        writer.record("update", "subject", (f"S{n:06d}",), f"00000000-0000-4000-8000-{n:012d}",
                      [FieldWrite("name", OWNER, after=f"Subject {n}", before=f"Old {n}"),
                       FieldWrite("credits", OWNER, after=n % 7, before=1),
                       FieldWrite("custom_attributes.Level", OWNER, after=str(n % 5), before="0")],
                      updated=(1_700_000_000_000 + n, "bench"))
    history.finish_apply(writer)
    return History.open(folder)



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=150_000)
    parser.add_argument("--asked", type=int, default=880, help="fields asked for (conflicts)")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench_last_values."))
    history = _journal(folder, args.entries)
    size = sum(p.stat().st_size for p in (folder / "journal").iterdir()) / 1e6
    step = max(1, args.entries // args.asked)
    wanted = {("subject", history.digester.key_token("subject", (f"S{n:06d}",)), "name")
              for n in range(0, args.entries, step)}
    print(f"journal of {args.entries} entries, {size:.0f} MB; {len(wanted)} fields asked")
    for run in range(1, args.runs + 1):
        started = time.process_time()
        tested = history.last_values(wanted)
        tested_s = time.process_time() - started
        started = time.process_time()
        whole = newest_values_read_whole(history, wanted)
        whole_s = time.process_time() - started
        print(f"run {run}: lines tested as text {tested_s:.2f} s CPU, journals read whole {whole_s:.2f} s CPU; "
              f"the same values: {tested == whole} ({len(tested)} found)")


if __name__ == "__main__":
    main()
